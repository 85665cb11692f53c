"""The Qt application: windows, panels, plots and the workers that feed them."""

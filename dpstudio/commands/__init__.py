"""The headless commands of ``dpstudio``, one module each with ``parser()`` and ``run(argv)``."""

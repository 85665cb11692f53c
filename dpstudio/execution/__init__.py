"""Where a release's sums are computed: in this process (pandas) or on a Dask cluster.

Same queries, same mechanisms, same accounting, same files out; only where the bounded
sums are added up changes. The engine's partitioned queries
(:mod:`dpstudio.engine.queries.partial`) run on each file where the data is and return
exact integers; the noise is drawn once, here on the client, from the OS CSPRNG.

- :mod:`~dpstudio.execution.engines`: the ``pandas | dask | auto`` choice, the one-line
  message when Dask is not installed, and the cluster (an existing scheduler, or a
  ``distributed.LocalCluster`` started and closed around the work).
- :mod:`~dpstudio.execution.partitions`: one task per file (read, hash once, clamp, snap,
  sum), and the exact reduce on the client.

Dask is an optional extra (``pip install 'dpstudio[dask]'``): nothing here imports it at
module level, and the engine never imports it.
"""

"""Tools around the engine: kernel warm-up (``warmup``), benchmarks (``benchmarks``,
``bench_nn``), time plots (``timeplot``) and the GTP conformance suite's runner
(``conformance``)."""

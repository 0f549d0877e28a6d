"""Run time: specialization, compilation (NVRTC / hiprtc), caching and launching."""

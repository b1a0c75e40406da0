"""The pure core: what a job is and how it may change. No I/O, no clock reads."""

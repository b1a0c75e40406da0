"""Running jobs: the worker, one attempt, the lane gate and the retention sweep."""

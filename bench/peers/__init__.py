"""backroom side by side with the job queues people use, each run as its users run it.

`make bench-peers` installs the peers pinned in requirements.txt into build/peers-venv
and runs `python -m bench.peers.run` there (see bench/peers/run.py).
"""

"""Process plumbing shared by the console scripts: stop signals and start-up refusals."""

"""The seeds' example timeline and the offline demo tasks."""

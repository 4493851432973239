"""Model evaluation (`openmind eval`)."""

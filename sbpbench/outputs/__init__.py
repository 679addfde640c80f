"""What is made from results: figures, REPRODUCTION.md and the regression check."""

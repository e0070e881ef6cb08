"""Task generators: benchmark tasks built at evaluation time from parameters and a seed."""

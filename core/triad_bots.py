"""TRIAD's bots (placeholder while being written)."""
from core import bots
BOTS = {"random": bots.RandomBot}

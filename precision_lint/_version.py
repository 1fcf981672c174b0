"""The package version: a leaf module every other module may import (no import back)."""
__version__ = "0.1.0"

"""The producer side: the application Client, routing, and the prefixq command line."""

from producer.client import Client, JobHandle, Submission
from producer.items import Item
from producer.results import JobResult

__all__ = ["Client", "Item", "JobHandle", "JobResult", "Submission"]

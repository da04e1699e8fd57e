import os
import uuid

import pytest


@pytest.fixture
def segment():
    """A fresh shared-memory segment name, removed afterwards."""
    import breakwater
    name = f"/bw-pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    yield name
    breakwater.SharedBreaker.unlink(name)

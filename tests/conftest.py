import pytest

from vision.settings import dataset_dir


@pytest.fixture(scope="session")
def real_photos_dir():
    """The real labelled photos, when this machine has them; tests using it skip otherwise."""
    root = dataset_dir()
    if not (root / "valid" / "images").is_dir():
        pytest.skip(f"real photos not found at {root} (set RUMMIKUB_DATA)")
    return root

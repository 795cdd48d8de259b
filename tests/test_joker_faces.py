"""Random joker faces for training (`training.joker_faces`): each joker its own picture,
only for editions that ask for them, so the held-out editions and every other draw of
training stay as they were."""

import numpy as np
import pytest

pytest.importorskip("PIL")  # the renderer is training-only (Pillow draws the numbers)

from training import editions as E  # noqa: E402
from training import joker_faces as F  # noqa: E402


def _ink_share(face: np.ndarray, body) -> float:
    """Share of the face's pixels far from the body colour (the printed picture)."""
    diff = np.abs(face[..., :3].astype(np.float32) - np.asarray(body, np.float32)).max(2)
    return float((diff[10:-10, 10:-10] > 40).mean())


def test_every_family_draws_a_picture_of_some_size_deterministically():
    body, ink = (225, 235, 240), (40, 35, 200)
    seen = set()
    for seed in range(40):
        faces = []
        for _ in range(2):
            face = np.empty((128, 90, 3), np.float32)
            face[:] = body
            F.draw_emblem(face, ink, body, 45, 45, 28, seed)
            faces.append(face)
        assert np.array_equal(faces[0], faces[1]), seed
        # a picture, not a speck nor a filled face: 3-45 % of the inner face
        assert 0.03 < _ink_share(faces[0], body) < 0.45, (seed, F.family_of(seed))
        seen.add(F.family_of(seed))
    assert seen == set(F.FAMILIES)


def test_emblem_jokers_differ_joker_to_joker_and_numbers_are_untouched():
    rng = np.random.default_rng(3)
    edition = E.with_emblem_jokers(E.random_edition(rng))
    looks = [edition.look("J", rng) for _ in range(6)]
    assert len({look[9] for look in looks}) == 6
    assert all(look[9].startswith("emblem:") for look in looks)
    faces = [E.edition_face("J", look) for look in looks]
    assert not any(np.array_equal(faces[0], f) for f in faces[1:])
    # a numbered tile of that edition is drawn as the edition draws it without emblems
    plain = E.random_edition(np.random.default_rng(3))
    assert np.array_equal(E.edition_face("R7", edition.look("R7", np.random.default_rng(9))),
                          E.edition_face("R7", plain.look("R7", np.random.default_rng(9))))


def test_jokers_of_some_families_only():
    """`with_emblem_jokers(edition, families)` draws its jokers from those families only:
    the same seed draws the picture of its family among them (the `--joker-families` of
    training.classifier.train)."""
    rng = np.random.default_rng(5)
    base = E.random_edition(rng)
    some = E.with_emblem_jokers(base, ("rosette", "mirrored"))
    looks = [some.look("J", rng) for _ in range(8)]
    assert all(look[9].startswith("emblem/rosette+mirrored:") for look in looks)
    for look in looks:
        seed = int(look[9].split(":")[1])
        family = F.family_of(seed, ("rosette", "mirrored"))
        # drawn as that family is drawn alone
        alone = list(look)
        alone[9] = f"emblem/{family}:{seed}"
        assert np.array_equal(E.edition_face("J", look), E.edition_face("J", tuple(alone)))
    assert {F.family_of(int(k[9].split(":")[1]), ("rosette", "mirrored")) for k in looks} == \
        {"rosette", "mirrored"}
    with pytest.raises(ValueError, match="joker families"):
        E.with_emblem_jokers(base, ("ellipse",))
    with pytest.raises(ValueError, match="joker families"):
        E.with_emblem_jokers(base, ())


def test_other_editions_draw_as_before():
    """An edition without emblems draws nothing more for its jokers: the held-out
    editions' evaluation scenes stay the same."""
    for edition in E.HELD_OUT.values():
        a, b = np.random.default_rng(4), np.random.default_rng(4)
        look = edition.look("J", a)
        b.integers(2)  # the joker's ink
        b.normal(0, 2)  # its size
        assert look[9] == edition.joker
        assert a.bit_generator.state == b.bit_generator.state


def test_a_jokers_scene_holds_a_joker_in_each_set():
    jokers = tiles = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        edition = E.with_emblem_jokers(E.random_edition(rng))
        photo, labels, _ = E.render_edition_scene(rng, edition, kind="jokers", width=640,
                                                  height=480)
        codes = [c for c, _ in labels]
        assert photo.shape == (480, 640, 3) and "J" in codes, (seed, codes)
        jokers, tiles = jokers + codes.count("J"), tiles + len(codes)
    assert jokers >= 0.25 * tiles, (jokers, tiles)
    with pytest.raises(ValueError, match="jokers"):
        E.render_edition_scene(rng, edition, kind="no such scene")


def test_jokers_scenes_make_jokers_common_in_the_crops():
    from training.classifier.data import synthetic_crops

    _x, y = synthetic_crops(40, (32, 44), seed=2, jokers=1.0, log=lambda *_: None)
    assert (y % 53 == 52).mean() > 0.15  # label 52 is J, upright or turned


def test_training_refuses_unknown_joker_families(capsys):
    """`--joker-families` names families of training.joker_faces, or the run stops (exit 2)
    with the ones there are, before any data is made."""
    pytest.importorskip("torch")  # the train extra
    from training.classifier import train

    with pytest.raises(SystemExit) as stop:
        train.main(["--joker-families", "rosette,butterfly", "--out", "/nonexistent/x"])
    assert stop.value.code == 2
    assert "blob, rosette, mirrored, word" in capsys.readouterr().err

"""Reading tiles with a profile: white balance, the network, ink colour and prototypes.

`ProfileHead(profile, classifier).classify_both_ways(image, quads)` has the classifier's
own signature and returns probabilities over the profile's labels (its 4th slot G for a
green edition). Per tile:

- the crop is scaled so its body has the calibration photo's body colour;
- one network run gives class probabilities and the embedding;
- the colour slot weighs the ink's colour (measured the tile's way up, against the
  profile's slot colours, by lightness, chroma and hue) with the network's colour read
  through how the network read each slot at calibration: where it was right on this
  edition it counts, where it was not (green tiles it calls black) the ink decides;
- the number (or joker) multiplies the network's number probabilities with the nearest-
  prototype evidence; a crop far from every prototype keeps the network's numbers alone;
- which way up: the network's turn, weighed with the upright and turned prototypes, never
  surer than 1 - ORIENT_DOUBT (a lone 6 and a 9 turned round look alike; a rack's row
  of tiles facing one way can then still put it right, `vision.game.rack`);
- a crop like no calibration tile is read again in its box turned a quarter round (a
  nearly square tile's box can lie across it), kept where that reading is closer to a
  calibration tile and the network is surer of it;
- a row's best probability is capped at the network's: the profile changes readings, not
  which finds count as tiles.
"""

from __future__ import annotations

import numpy as np

from calibration.features import body_colors, colour_distance2, ink_features
from calibration.profile import Profile, ProfileError
from vision.recognition.classify import quarter_turned
from vision.recognition.rectify import rotate_quad_180

# Softmax temperature of cosine similarities: a calibration tile's own number's prototypes
# are a median 0.14-0.4 closer to it than any other number's (rendered editions).
PROTO_TEMPERATURE = 0.05
# Below this best similarity a crop is like no calibration tile: the network decides alone.
PROTO_NEAR = 0.45
NUMBERS = 13
# How the ink's colour and the network's colour combine (log-linear weights; the ink's
# squared distance above the nearest slot's is capped, so a misread ink is weak evidence),
# and the least probability the network's colour is taken to give a slot. Chosen on the
# held-out editions' scenes of training/editions.py (seeds 70-72, bench/calibrate_bench.py)
# with classifier 70c3781d5de1, and rechecked with 16e8b57aa216: still the best of those
# tried (ink weight 0.3-1, cap 9-16, temperature 0.05-0.12).
INK_WEIGHT = 0.5
INK_CAP = 9.0
NET_COLOUR_WEIGHT = 1.0
NET_COLOUR_FLOOR = 0.02
# A crop whose best prototype similarity is below this is read again in its box turned a
# quarter round, and that reading wins when its similarity is higher by QUARTER_MARGIN
# and the network's best probability is higher too. Chosen on rendered held-out editions'
# scenes with renderer seeds 470,000+ and calibration photos 479,000+ (not the ones
# bench.eval_editions scores): of 224 boxes lying 90 degrees across their tile, 11 were
# read right, 134 with the second look; of the 2,773 others 2,668 -> 2,663; ~14 % of the
# crops are read again (4 of 479 on the real valid/ photos with a profile from a real
# one). The network's say keeps a tile whose number the calibration did not show (like no
# prototype either way round) as it was read.
REREAD_BELOW = 0.9
QUARTER_MARGIN = 0.02
# The least probability kept on a tile lying the other way round than it is read (see
# `_doubt_the_turn`). On the same scenes, racks read right after `read_rack`: 0 -> 0.02
# -> 0.05: 86.6 -> 89.9 -> 89.7 % (white_teal 86.3 -> 90.0 %: its 6s and 9s are one glyph).
ORIENT_DOUBT = 0.02


def _doubt_the_turn(joint: np.ndarray, turned: np.ndarray, net_num: np.ndarray) -> np.ndarray:
    """`joint` (N, 14, 2) with at least ORIENT_DOUBT of each crop's probability on the way
    round it was not read (spread there as the joint, or else the network, spreads it).

    Network and prototypes together are sure of a 6 where a 9 lies turned round (both
    see the same glyph), and a rack's "all tiles face one way" (`vision.game.rack`) can only
    put it right when the other way keeps some probability."""
    out = joint.copy()
    rows = np.arange(len(joint))
    other = np.where(turned, 0, 1)
    part = joint[rows, :, other]
    mass = part.sum(axis=1)
    weak = mass < ORIENT_DOUBT
    if not weak.any():
        return out
    fallback = net_num[rows, :, other]
    shape = np.where((mass > 1e-30)[:, None], part, fallback)
    shape = shape / np.maximum(shape.sum(axis=1, keepdims=True), 1e-30)
    this = joint[rows, :, 1 - other]
    this = this / np.maximum(this.sum(axis=1, keepdims=True), 1e-30)
    w = weak[:, None]
    out[rows, :, other] = np.where(w, ORIENT_DOUBT * shape, part)
    out[rows, :, 1 - other] = np.where(w, (1 - ORIENT_DOUBT) * this, joint[rows, :, 1 - other])
    return out


class ProfileHead:
    def __init__(self, profile: Profile, classifier, source: str = "profile") -> None:
        if not getattr(classifier, "embedding_output", None):
            raise ProfileError(f"{source}: the loaded classifier has no embedding output, so no "
                               "profile can be used with it")
        profile.check_model(getattr(classifier, "model_sha256", None), source)
        self.profile = profile
        self.classifier = classifier
        self.labels = profile.labels
        net_labels = tuple(getattr(classifier, "labels", ()))
        if len(net_labels) != len(self.labels):
            raise ProfileError(f"{source}: the classifier reads {len(net_labels)} classes, the "
                               f"profile {len(self.labels)}")
        # Network column -> (slot index in the profile's label order, number) or joker.
        self._slot_order = tuple(dict.fromkeys(c[0] for c in self.labels if c != "J"))
        self._net_slot = np.array([-1 if c == "J" else "KRBO".index(c[0]) for c in net_labels])
        self._net_number = np.array([0 if c == "J" else int(c[1:]) for c in net_labels])
        by_slot = {s.slot: s for s in profile.slots}
        self._mu = np.float32([by_slot[s].lab for s in self._slot_order])
        self._spread = np.float32([by_slot[s].spread for s in self._slot_order])
        self._net_colours = np.float32(profile.net_colours).reshape(4, 4)
        v = np.asarray(profile.vectors, np.float32)
        self._protos = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
        # Prototype -> number column (1..13, 0 = joker), orientation.
        self._proto_number = np.array([0 if c == "J" else int(c[1:]) for c in profile.codes])
        self._proto_turned = np.asarray(profile.turned, bool)
        self.last_similarity = np.zeros(0, np.float32)
        self.last_crops = np.zeros((0, 0, 0, 3), np.uint8)
        self.last_quarter_turned = 0
        self.last_network_sure = np.zeros(0, np.float32)

    # -- the parts -------------------------------------------------------------------------
    def balance(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bodies = body_colors(crops)
        gains = np.clip(np.float32(self.profile.body_bgr)[None] / bodies, 0.4, 2.5)
        out = np.clip(crops.astype(np.float32) * gains[:, None, None, :] + 0.5, 0, 255)
        return out.astype(np.uint8), bodies * gains

    def slot_probs(self, crops: np.ndarray, bodies: np.ndarray,
                   net_slot_probs: np.ndarray) -> np.ndarray:
        """(N, 4) probability of each of the profile's colour slots."""
        ink, _maps = ink_features(crops, bodies)
        z2 = colour_distance2(ink, self._mu, self._spread)
        # Capped: an ink reading far from every slot (a logo, a neighbour's number in a
        # crop that sits off its tile) is weak evidence, not a veto.
        if len(z2):
            z2 = z2 - np.where(np.isfinite(z2), z2, np.inf).min(axis=1, keepdims=True)
        loglik = -0.5 * INK_WEIGHT * np.minimum(z2, INK_CAP)
        loglik = np.where(np.isfinite(loglik), loglik, 0.0)  # no ink seen: no evidence
        # The network's colour, through how it read this edition's slots at calibration.
        likely = np.einsum("nk,sk->ns", net_slot_probs, self._net_colours)  # P(says | slot)
        loglik += NET_COLOUR_WEIGHT * np.log(likely + NET_COLOUR_FLOOR)
        loglik -= loglik.max(axis=1, keepdims=True)
        p = np.exp(loglik)
        return p / p.sum(axis=1, keepdims=True)

    def number_evidence(self, embedding: np.ndarray):
        """(N, 14, 2) prototype probability of joker (column 0) and each number, seen
        upright (0) or turned round (1), and each crop's best similarity (N,)."""
        e = embedding / np.maximum(np.linalg.norm(embedding, axis=1, keepdims=True), 1e-9)
        # einsum, not BLAS: right after an onnxruntime run OpenBLAS's threads wait on the
        # runtime's spinning ones (30 ms for a product this small).
        sim = np.einsum("nd,md->nm", e, self._protos)  # (N, M)
        # A number the calibration never showed counts as neither near nor far.
        best = np.full((len(e), NUMBERS + 1, 2), PROTO_NEAR, np.float32)
        for k in range(NUMBERS + 1):
            for o in range(2):
                cols = (self._proto_number == k) & (self._proto_turned == bool(o))
                if cols.any():
                    best[:, k, o] = sim[:, cols].max(axis=1)
        logits = best.reshape(len(e), -1) / PROTO_TEMPERATURE
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return p.reshape(best.shape), sim.max(axis=1)

    # -- the classifier's interface ----------------------------------------------------------
    def classify(self, image_bgr: np.ndarray, quads: np.ndarray):
        upright, probs, _flip = self.classify_both_ways(image_bgr, quads)
        return upright, probs

    def classify_both_ways(self, image_bgr: np.ndarray, quads: np.ndarray):
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if len(quads) == 0:
            z = np.zeros((0, len(self.labels)), np.float32)
            return quads.copy(), z, z.copy()
        crops = self.classifier.crops(image_bgr, quads)
        self.last_crops = crops  # what the pipeline's "not a tile" rules look at
        upright, probs, flip = self.read_crops(crops, quads)
        similarity, sure = self.last_similarity.copy(), self.last_network_sure.copy()
        self.last_quarter_turned = 0
        # A tile seen nearly square (a rack or a table at a low angle) sometimes gets a box
        # whose long side runs along the tile's width: its crop shows the number on its side.
        # Such a crop is like no calibration tile, so a crop not close to one is read again
        # in the box turned a quarter round, and that reading is kept where it is clearly
        # closer to a calibration tile.
        again = np.flatnonzero(similarity < REREAD_BELOW)
        if len(again):
            turned = quarter_turned(quads[again])
            up2, probs2, flip2 = self.read_crops(self.classifier.crops(image_bgr, turned), turned)
            # ...and where the network is surer of it too: a tile whose number the calibration
            # did not show is like no prototype either way round.
            better = ((self.last_similarity > similarity[again] + QUARTER_MARGIN)
                      & (self.last_network_sure > sure[again]))
            take = again[better]
            # As in read_crops: the second look changes what a find reads as, not whether
            # it counts as a tile (it lifted knots and rack edges over the pipeline's
            # threshold: 26 more extra finds on the rendered editions).
            cap = np.minimum(1.0, sure[take] / np.maximum(probs2[better].max(axis=1), 1e-9))
            upright[take] = up2[better]
            probs[take], flip[take] = probs2[better] * cap[:, None], flip2[better] * cap[:, None]
            similarity[take] = self.last_similarity[better]
            self.last_quarter_turned = len(take)
        self.last_similarity = similarity
        return upright, probs, flip

    def read_crops(self, raw_crops: np.ndarray, quads: np.ndarray):
        """`classify_both_ways` for crops already cut at `quads`, read as they are (no
        quarter-turned second look)."""
        n = len(quads)
        crops, bodies = self.balance(raw_crops)
        net, net_turned, embedding = self.classifier.predict_joint(crops, with_embedding=True)
        # The network's joker + numbers (N, 14) x (upright, turned), and colour slots (N, 4).
        net_num = np.zeros((n, NUMBERS + 1, 2), np.float32)
        for o, part in enumerate((net - net_turned, net_turned)):
            np.add.at(net_num[:, :, o].T, self._net_number, part.T)
        numbered = self._net_slot >= 0
        net_slot = np.zeros((n, 4), np.float32)
        np.add.at(net_slot.T, self._net_slot[numbered], net[:, numbered].T)
        net_slot /= np.maximum(net_slot.sum(axis=1, keepdims=True), 1e-9)

        proto, best_sim = self.number_evidence(embedding)
        near = best_sim >= PROTO_NEAR
        self.last_similarity = best_sim.astype(np.float32)
        self.last_network_sure = net.max(axis=1)
        joint = net_num * np.where(near[:, None, None], proto, 1.0)
        joint /= np.maximum(joint.sum(axis=(1, 2), keepdims=True), 1e-12)
        turned = joint[:, :, 1].sum(axis=1) > 0.5
        joint = _doubt_the_turn(joint, turned, net_num)
        # The ink is measured the tile's way up: a logo printed at the foot stays out of it.
        upright_crops = np.where(turned[:, None, None, None], crops[:, ::-1, ::-1], crops)
        slot = self.slot_probs(upright_crops, bodies, net_slot)

        upright = np.where(turned[:, None, None], rotate_quad_180(quads), quads)
        # "The other way round" from the quad returned: the crop's own upright half for a
        # tile taken as turned (the classifier's convention, which racks rely on).
        other = np.where(turned[:, None], joint[:, :, 0], joint[:, :, 1])
        number = joint.sum(axis=2)
        probs = np.zeros((n, len(self.labels)), np.float32)
        flip = np.zeros_like(probs)
        for col, label in enumerate(self.labels):
            k = 0 if label == "J" else int(label[1:])
            share = 1.0 if label == "J" else slot[:, self._slot_order.index(label[0])]
            probs[:, col] = number[:, k] * share
            flip[:, col] = other[:, k] * share
        # A profile changes what a find reads as, not whether it is a tile: a row's best
        # probability is kept at most the network's own (the rest of the row: maybe no tile
        # at all), so the pipeline's "not a tile" threshold, tuned on the network, holds.
        # Without this, knots and decoys the network doubts passed it (rendered editions).
        scale = np.minimum(1.0, net.max(axis=1) / np.maximum(probs.max(axis=1), 1e-9))
        probs *= scale[:, None]
        flip *= scale[:, None]
        return upright.astype(np.float32), probs, flip

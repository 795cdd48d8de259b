"""The rack's way and the view `off_the_rack` judges in, on the detector's own boxes.

The boxes are today's detector's on two white Original renders of `bench.eval_white_racks`
(16 MP, corners rounded to the pixel), from the fresh seed ranges no stand rule was tuned on
(docs/decisions/rack-tiles-only.md, "The plane's view trading tall tiles for short ones"):
each read wrong by the rules before, and the reason is in the boxes alone.
"""

from __future__ import annotations

import numpy as np

from tests.table_helpers import detections_from
from vision.game.stand import off_the_rack, rack_axis

# White 3,100,001 upright: a black three-tier stand holding eight tiles (O9 O10 O11 R5 in
# front, R3 B12, then B12 R1), with a row of six lying far behind it, three lying to its
# right and two rows of three lying nearer the phone.
FRONT_3100001 = {2, 5, 7, 17}
STAND_3100001 = FRONT_3100001 | {9, 18, 16, 21}
CODES_3100001 = ["K6", "R3", "O10", "R5", "B10", "O11", "B2", "O9", "R12", "R3", "B4", "B1",
                 "O12", "R12", "K12", "B5", "B12", "R5", "B12", "B3", "O5", "R1", "B2", "R11",
                 "B6", "R4", "B11"]
QUADS_3100001 = [
    [[1315, 3188], [1468, 3159], [1508, 3372], [1355, 3401]],
    [[1145, 3208], [1304, 3177], [1343, 3381], [1184, 3412]],
    [[1118, 2433], [1257, 2433], [1257, 2629], [1118, 2629]],
    [[2279, 2957], [2413, 2930], [2449, 3112], [2316, 3139]],
    [[2432, 2954], [2572, 2930], [2605, 3120], [2465, 3144]],
    [[1266, 2423], [1404, 2426], [1400, 2632], [1263, 2630]],
    [[742, 1937], [845, 1947], [831, 2089], [728, 2079]],
    [[959, 2432], [1101, 2428], [1107, 2623], [965, 2627]],
    [[2362, 2126], [2457, 2114], [2473, 2244], [2377, 2256]],
    [[967, 2311], [1083, 2271], [1134, 2418], [1019, 2458]],
    [[976, 1963], [1078, 1962], [1078, 2105], [976, 2105]],
    [[628, 1924], [739, 1945], [712, 2092], [601, 2071]],
    [[2247, 2114], [2344, 2104], [2357, 2236], [2260, 2245]],
    [[2125, 2931], [2279, 2918], [2296, 3129], [2142, 3141]],
    [[2123, 2111], [2224, 2098], [2241, 2236], [2141, 2249]],
    [[1084, 1973], [1196, 1965], [1207, 2108], [1095, 2116]],
    [[1011, 2154], [1132, 2152], [1134, 2307], [1013, 2309]],
    [[1416, 2417], [1557, 2418], [1555, 2629], [1415, 2628]],
    [[1125, 2294], [1263, 2288], [1271, 2457], [1133, 2463]],
    [[849, 1942], [964, 1942], [964, 2099], [848, 2099]],
    [[1477, 3170], [1636, 3142], [1676, 3369], [1517, 3396]],
    [[1146, 2143], [1272, 2145], [1270, 2318], [1143, 2316]],
    [[373, 3127], [537, 3123], [542, 3357], [379, 3361]],
    [[556, 3123], [706, 3117], [714, 3339], [564, 3345]],
    [[1191, 1977], [1302, 1968], [1314, 2120], [1203, 2129]],
    [[2503, 2594], [2612, 2598], [2607, 2748], [2498, 2745]],
    [[199, 3136], [364, 3133], [368, 3366], [203, 3368]],
]

# White 3,000,029 sideways: a black one-tier stand of six (B6 B7 O3 B12 B5 R10), two tiles
# lying behind it, and seven lying each its own way, some of them large near the phone.
STAND_3000029 = [8, 9, 10, 11, 12, 13]
CODES_3000029 = ["O7", "K2", "K1", "R4", "B12", "J", "O9", "B1", "B6", "B7", "O3", "B12", "B5",
                 "R10", "K7"]
QUADS_3000029 = [
    [[2132, 1226], [2264, 1215], [2313, 1279], [2181, 1290]],
    [[2284, 1211], [2420, 1204], [2452, 1271], [2317, 1279]],
    [[3185, 812], [3314, 956], [2689, 1018], [2560, 874]],
    [[101, 1798], [-61, 1778], [23, 1703], [185, 1723]],
    [[1064, 1078], [1180, 1077], [1181, 1133], [1065, 1133]],
    [[602, 1566], [786, 1564], [793, 1651], [609, 1652]],
    [[956, 1095], [1077, 1098], [1064, 1157], [943, 1154]],
    [[3189, 1289], [3284, 1261], [3368, 1330], [3273, 1359]],
    [[1801, 1294], [1983, 1231], [1980, 1481], [1827, 1526]],
    [[1996, 1266], [2204, 1198], [2161, 1460], [1989, 1508]],
    [[1413, 1301], [1601, 1282], [1610, 1542], [1454, 1555]],
    [[1223, 1325], [1410, 1317], [1441, 1565], [1286, 1571]],
    [[1596, 1268], [1806, 1247], [1836, 1540], [1627, 1561]],
    [[1050, 1365], [1218, 1344], [1248, 1582], [1079, 1603]],
    [[344, 1697], [415, 1791], [286, 1889], [215, 1795]],
]

# White 3,000,028 upright: a black one-tier stand of six (K11 B11 R11 O11 K2 K1) on a light
# marble table, two rows lying behind it and a joker lying to its right.
STAND_3000028 = [9, 10, 13, 14, 15, 16]
CODES_3000028 = ["R8", "R5", "B9", "R6", "R9", "O11", "R4", "B7", "R9", "K11", "B11", "R7", "R7",
                 "R11", "O11", "K2", "K1", "J"]
QUADS_3000028 = [
    [[797, 1849], [887, 1875], [831, 1974], [732, 1944]],
    [[510, 1803], [592, 1823], [521, 1909], [431, 1887]],
    [[1220, 2057], [1323, 2092], [1306, 2216], [1192, 2176]],
    [[602, 1817], [687, 1838], [622, 1928], [530, 1904]],
    [[1567, 2103], [1667, 2156], [1646, 2264], [1538, 2202]],
    [[1327, 2080], [1426, 2111], [1425, 2233], [1315, 2197]],
    [[418, 1785], [501, 1802], [428, 1886], [338, 1868]],
    [[1441, 2103], [1539, 2107], [1534, 2235], [1436, 2231]],
    [[908, 1863], [975, 1904], [917, 1998], [850, 1957]],
    [[439, 2126], [556, 2125], [557, 2303], [440, 2303]],
    [[693, 2160], [819, 2161], [816, 2351], [691, 2350]],
    [[705, 1823], [777, 1863], [722, 1964], [649, 1924]],
    [[1121, 2045], [1207, 2075], [1167, 2190], [1081, 2161]],
    [[565, 2143], [690, 2145], [689, 2328], [563, 2327]],
    [[323, 2117], [430, 2115], [433, 2274], [326, 2276]],
    [[939, 2198], [1066, 2204], [1058, 2387], [930, 2381]],
    [[814, 2181], [945, 2177], [951, 2366], [821, 2370]],
    [[1729, 2120], [1624, 2116], [1629, 1968], [1735, 1972]],
]

# Rendered 1,006,102 (`bench.rack_totals`, white with a logo): a two-tier stand of 17 tiles
# and five lying behind it (K10, K7, K9, K8 and O5).
LYING_1006102 = [1, 3, 4, 6, 21]
CODES_1006102 = ["R12", "K10", "K3", "K7", "K9", "B7", "K8", "B8", "B2", "R6", "B7", "O9", "O10",
                 "B1", "O8", "K7", "O9", "O6", "B5", "B6", "B9", "O5"]
QUADS_1006102 = [
    [[369, 255], [449, 259], [445, 337], [353, 336]],
    [[967, 265], [1017, 276], [1052, 329], [998, 318]],
    [[529, 271], [600, 281], [599, 359], [518, 349]],
    [[819, 249], [867, 260], [885, 307], [832, 296]],
    [[915, 263], [961, 269], [995, 318], [945, 312]],
    [[460, 324], [538, 334], [526, 426], [436, 417]],
    [[871, 256], [919, 270], [931, 312], [879, 296]],
    [[541, 337], [610, 348], [608, 431], [528, 422]],
    [[605, 274], [679, 288], [684, 372], [599, 358]],
    [[279, 233], [355, 250], [354, 329], [281, 322]],
    [[445, 265], [526, 271], [527, 350], [434, 347]],
    [[314, 381], [400, 385], [393, 505], [307, 501]],
    [[663, 424], [744, 434], [731, 543], [651, 533]],
    [[403, 397], [479, 404], [470, 510], [395, 503]],
    [[484, 404], [568, 411], [559, 525], [475, 519]],
    [[225, 377], [304, 376], [304, 481], [226, 482]],
    [[571, 421], [650, 425], [644, 528], [566, 524]],
    [[748, 419], [834, 434], [812, 561], [726, 546]],
    [[307, 295], [373, 319], [343, 401], [276, 377]],
    [[363, 318], [450, 320], [447, 426], [361, 424]],
    [[617, 354], [701, 356], [699, 460], [615, 459]],
    [[1083, 313], [1054, 331], [1029, 291], [1058, 273]],
]


def test_a_plane_fit_to_rows_lying_by_does_not_trade_the_stands_front_tier_for_them():
    # the plane's view kept eleven tiles (the row behind and the top tier joined with the
    # three lying to its right) and named the stand's four front tiles off: on summed box
    # heights it kept more, but the tiles it traded away box taller than those it keeps
    d = detections_from(CODES_3100001, QUADS_3100001)
    kept = set(np.nonzero(~off_the_rack(d))[0].tolist())
    # (the top tier's B12 is still named off: the eval's one tile missed there)
    assert FRONT_3100001 <= kept <= STAND_3100001 and len(kept) >= 7


def test_a_way_found_by_neither_weighting_does_not_keep_every_tile():
    d = detections_from(CODES_3000029, QUADS_3000029)
    q = d.corners.astype(np.float64)
    # the near tiles lying each their own way outweigh the stand by box height squared, so
    # the weighted way is not found; the plain way is, and it judges
    assert rack_axis(q, weighted=True) is None and rack_axis(q) is not None
    assert np.nonzero(~off_the_rack(d))[0].tolist() == STAND_3000029


def test_a_plane_view_keeping_more_squared_still_does_not_trade_two_tall_tiles_for_short_ones():
    # the plane's view keeps more box height squared (nine lying tiles of 107-129 px) but
    # names off two of the stand's tiles of 178-183 px that the photo's view keeps
    d = detections_from(CODES_3000028, QUADS_3000028)
    assert np.nonzero(~off_the_rack(d))[0].tolist() == STAND_3000028


def test_one_tall_tile_traded_does_not_outweigh_the_plane_views_margin():
    # the plane's view keeps 16 of the 17 stand tiles, the photo's 12; the plane's names
    # off one that the photo's keeps (O6, boxed tallest), which alone does not refuse it
    d = detections_from(CODES_1006102, QUADS_1006102)
    lying = np.zeros(len(d), bool)
    lying[LYING_1006102] = True
    assert off_the_rack(d).tolist() == lying.tolist()

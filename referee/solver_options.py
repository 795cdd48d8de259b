"""The solver's per-colour option tables: what one colour can do at one number, and when
the tiles sent to groups at a number can form groups. Pure and cached: the same few
hundred arguments recur across every table."""

from __future__ import annotations

from functools import cache, lru_cache

_TOP = 13


@cache
def _colour_options(a1, a2, a3, tiles_here, spare, prefix_max, ahead, relaxed):
    """Every way one colour can go on at one number, cheapest in jokers first.

    Runs of length 1 or 2 must go on (with a real tile or a joker); runs of 3+ may also
    close. Real tiles left over start new runs (optionally with jokers in front) or go to
    groups. Each option: new counts (b1, b2, b3), tiles to groups, jokers spent, runs
    closed, and the choice itself for rebuilding the sets. `ahead` holds this colour's
    tile counts at the next two numbers (-1 past 13): a short run needs tiles or jokers
    there, which rules out most options near the top without searching them.

    `relaxed`: jokers only where they are needed. A 3+ run then takes a joker only to
    bridge a gap to a tile of its colour just ahead; spare jokers are placed afterwards.
    """
    next1, next2 = ahead
    bridge = max(0, spare - (next1 > 0 and 1 or next2 > 0 and 2 or 3) + 1) if relaxed else spare
    options = []
    for x1 in range(min(a1, tiles_here) + 1):
        for x2 in range(min(a2, tiles_here - x1) + 1):
            cost12 = (a1 - x1) + (a2 - x2)
            if cost12 > spare:
                continue
            for x3 in range(min(a3, tiles_here - x1 - x2) + 1):
                for y3 in range(min(a3 - x3, spare - cost12, bridge) + 1):
                    closed = a3 - x3 - y3
                    cost = cost12 + y3
                    rest = tiles_here - x1 - x2 - x3
                    for prefixes in _prefix_sets(rest, spare - cost, prefix_max):
                        starts_bare = prefixes.count(0)
                        # Closing a 3+ run while a new run starts right after it is the
                        # same as letting the old run go on, so skip the duplicate.
                        if starts_bare and closed:
                            continue
                        b1 = starts_bare
                        b2 = a1 + prefixes.count(1)
                        b3 = a2 + x3 + y3 + sum(1 for p in prefixes if p >= 2)
                        left = spare - cost - sum(prefixes)
                        # Past 13 no run can go on; before that, short runs need tiles
                        # or jokers at the next numbers.
                        if (next1 < 0 and b1 + b2) or (next2 < 0 and b1):
                            continue
                        if max(0, b1 + b2 - max(next1, 0)) + max(0, b1 - max(next2, 0)) > left:
                            continue
                        options.append((cost + sum(prefixes), rest - len(prefixes), closed,
                                        (b1, b2, b3), (x1, x2, x3, y3, prefixes)))
    # Cheap in jokers first, then the fewest tiles to groups (runs are easier to satisfy).
    options.sort(key=lambda o: (o[0], o[1], o[2]))
    return tuple((b[0], b[1], b[2], to_group, cost, choice)
                 for cost, to_group, closed, b, choice in options)


@cache
def _prefix_sets(max_runs, budget, prefix_max):
    """Non-decreasing tuples of joker prefixes for new runs: up to `max_runs` runs, total
    jokers within `budget`, each prefix at most `prefix_max`."""
    result = [()]
    frontier = [()]
    for _ in range(max_runs):
        grown = []
        for prefixes in frontier:
            low = prefixes[-1] if prefixes else 0
            left = budget - sum(prefixes)
            for p in range(low, min(prefix_max, left) + 1):
                grown.append(prefixes + (p,))
        result.extend(grown)
        frontier = grown
    return tuple(result)


@cache
def _groups_fit(sizes, jokers, group_max):
    """Can tiles of one number, `sizes[i]` of some colour each, plus exactly `jokers` jokers
    form groups? Returns how many groups to make, or None.

    With G groups, dealing the tiles round-robin by colour keeps colours apart and the
    groups as even as possible, which needs the fewest jokers; any more jokers fit as long
    as no group passes `group_max`.
    """
    total = sum(sizes)
    if total == 0:
        return 0 if jokers == 0 else None
    for count in range(max(sizes), total + 1):
        small, extra = divmod(total, count)
        need = (count - extra) * max(0, 3 - small) + extra * max(0, 2 - small)
        if need <= jokers <= count * group_max - total:
            return count
    return None


@cache
def _group_jokers_needed(sizes, still_to_come, group_max):
    """The fewest jokers that make groups of `sizes` (tiles per colour so far) when each
    colour still to come adds 0 up to its count of tiles: a bound for cutting off early."""
    best = None
    options = [()]
    for count in still_to_come:
        options = [o + (k,) for o in options for k in range(count + 1)]
    for added in options:
        total_sizes = tuple(sorted(sizes + added))
        for jokers in range(0, 3 * sum(total_sizes) + 1):
            if best is not None and jokers >= best:
                break
            if _groups_fit(total_sizes, jokers, group_max) is not None:
                best = jokers
                break
        if best == 0:
            return 0
    return best if best is not None else 99


# Bounded: with the groups so far in the key there are tens of thousands of these (about
# 13 MB after 100 bench tables), and a server runs for weeks.
@lru_cache(maxsize=1 << 16)
def _options_with_groups(a1, a2, a3, tiles_here, spare, prefix_max, ahead, relaxed, groups,
                         still_to_come, group_max):
    """_colour_options with the groups so far (a sorted tuple) carried on, less the options
    whose tiles sent to groups cannot form groups however the colours still to decide
    (`still_to_come`, their sorted counts; None: no cut-off) join them. Each option: new
    (b1, b2, b3), new groups, jokers spent, the choice, tiles to groups."""
    kept = []
    for b1, b2, b3, to_group, cost, choice in _colour_options(
            a1, a2, a3, tiles_here, spare, prefix_max, ahead, relaxed):
        new_groups = tuple(sorted(groups + (to_group,)))
        if still_to_come is not None and any(new_groups) and _group_jokers_needed(
                new_groups, still_to_come, group_max) > spare - cost:
            continue
        kept.append(((b1, b2, b3), new_groups, cost, choice, to_group))
    return tuple(kept)

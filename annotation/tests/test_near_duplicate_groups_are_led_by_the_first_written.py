"""Near-duplicate groups (the pay rule's and the deduplicated export's): rows taken in the order written, each
joins the most similar earlier leader at or above the threshold, else leads its own group; a near-copy of
a near-copy that is not close to the leader leads a group of its own."""

import numpy as np

from annotation.diversity.calculations import leader_groups


def unit(*angles_deg):
    return np.array([[np.cos(np.radians(a)), np.sin(np.radians(a))] for a in angles_deg], dtype=np.float32)


def test_each_row_joins_its_most_similar_earlier_leader():
    # cos 10° = 0.985, cos 20° = 0.940, cos 30° = 0.866: the threshold 0.9 joins rows up to about 25° apart
    X = unit(0, 10, 20, 90, 95, 45)
    leader = leader_groups(X, threshold=0.9)
    # 10° and 20° join 0°; 95° joins 90°; 45° is 45° from both leaders: a group of its own
    assert leader.tolist() == [0, 0, 0, 3, 3, 5]


def test_a_copy_of_a_copy_far_from_the_leader_leads_its_own_group():
    # 20° is within 25° of 0°; 40° is within 25° of 20°, but 20° is not a leader, and 0° is 40° away
    assert leader_groups(unit(0, 20, 40), threshold=0.9).tolist() == [0, 0, 2]


def test_the_closer_of_two_leaders_wins():
    # 0° and 40° lead (40° apart); 25° is 25° from 0° and 15° from 40°: it joins 40°
    assert leader_groups(unit(0, 40, 25), threshold=0.9).tolist() == [0, 1, 1]

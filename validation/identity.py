"""One person, one vote: whether a validator's vote on an example counts as a distinct worker.

A paid-crowd account entered its studies from client addresses (``CrowdSession.address_hash``,
a salted hash). Two crowd accounts that entered from one address are, for consensus, one
worker: on an example, a vote counts only if its validator shares no entry address with the
example's author or with a validator whose vote on it already counts. Accounts that are not
crowd accounts (signed-up users, owners) are distinct by account. Used by
``validation.standing`` (``vote_counts`` for each new vote, ``apply_standing``; every vote that counts passes
here), so pay (``validation/pay.py``, from ``Validation.counts``) follows the same rule.
"""

from annotation.models import CrowdSession
from validation.calculations import shares_entry
from validation.models import Validation


def entry_keys(user_ids) -> dict[int, frozenset[str]]:
    """``{user id: the address hashes of their crowd sessions}`` (empty for non-crowd accounts)."""
    keys: dict[int, set[str]] = {uid: set() for uid in user_ids}
    for user_id, address in (
        CrowdSession.objects.filter(worker__user_id__in=list(keys)).exclude(address_hash="").values_list("worker__user_id", "address_hash")
    ):
        keys[user_id].add(address)
    return {uid: frozenset(v) for uid, v in keys.items()}


def same_person_as(*, example, validator) -> int | None:
    """The id of the author of ``example``, or of a validator whose vote on it counts, who entered
    from one of ``validator``'s entry addresses; None when ``validator`` is a distinct worker here."""
    counted = list(
        Validation.objects.filter(example_id=example.pk, counts=True, mode=Validation.Mode.USER)
        .exclude(validator_id=validator.pk).values_list("validator_id", flat=True)
    )
    others = [example.author_id, *counted]
    keys = entry_keys([validator.pk, *others])
    return next((uid for uid in others if shares_entry(keys[validator.pk], keys[uid])), None)

"""Counts read in words with the right plural (issue 28 item 12): one helper, used by the results, release and
home pages; the pages print "1 reviewed parent", never "1 reviewed parents"."""

from __future__ import annotations

from physalign_site.count_words import counted, noun
from probes.release_words import release_counts_phrase


def test_counted_uses_the_singular_for_exactly_one():
    assert counted(1, "reviewed parent") == "1 reviewed parent"
    assert counted(2, "reviewed parent") == "2 reviewed parents"
    assert counted(0, "probe") == "0 probes"
    assert counted(1020, "parent") == "1,020 parents"
    assert counted(1, "batch", "batches") == "1 batch" and counted(3, "batch", "batches") == "3 batches"
    assert noun(1, "was a", "were") == "was a" and noun(4, "was a", "were") == "were"


def test_the_release_sentence_reads_in_words():
    assert (
        release_counts_phrase({"B": {"probes": 1, "mothers": 1}, "L": {"probes": 1200, "mothers": 2}})
        == "1 probe from 1 parent problem in pool B (grounding) and 1,200 probes from 2 parent problems in pool L "
        "(joint reading)"
    )

"""The WAL a phase wrote, read back with pg_walinspect: its bytes (the LSN moved) and its
records by resource manager and type."""

from collections import Counter
from dataclasses import dataclass, field

# Btree records that add a leaf entry for a heap tuple: an insert into a leaf page, and
# one into a posting list (deduplicated duplicates) that splits it.
BTREE_ENTRIES = ("INSERT_LEAF", "INSERT_POST")
# What a page split adds besides: the split itself, the downlink it inserts in the parent
# (INSERT_UPPER, INSERT_META when the parent is the root) and a new root.
BTREE_SPLITS = ("SPLIT_L", "SPLIT_R", "NEWROOT", "INSERT_UPPER", "INSERT_META")
# The heap records reported apart; Heap2 (prune, visibility, multi-insert...) and the rest
# of Heap fall in "other".
HEAP_KINDS = ("INSERT", "UPDATE", "HOT_UPDATE", "DELETE", "LOCK")


@dataclass
class Wal:
    bytes: int = 0  # pg_wal_lsn_diff(end, start)
    fpi_bytes: int = 0  # full-page images among them
    records: Counter = field(default_factory=Counter)  # "Heap/INSERT" -> count ("+INIT" folded)

    def of(self, rmgr: str) -> Counter:
        """The record types of RMGR with their counts."""
        return Counter({k.split("/", 1)[1]: v for k, v in self.records.items()
                        if k.split("/", 1)[0] == rmgr})

    def btree_entries(self) -> int:
        return sum(self.of("Btree")[k] for k in BTREE_ENTRIES)

    def btree_splits(self) -> int:
        return sum(self.of("Btree")[k] for k in BTREE_SPLITS)

    def heap(self) -> dict:
        """Heap and Heap2 records: "INSERT", "UPDATE", "HOT_UPDATE", "DELETE", "LOCK" (Heap
        LOCK and Heap2 LOCK_UPDATED, each a row lock), "other" and "all"."""
        heap, heap2 = self.of("Heap"), self.of("Heap2")
        split = {k: heap[k] for k in HEAP_KINDS}
        split["LOCK"] += heap2["LOCK_UPDATED"]
        every = sum(heap.values()) + sum(heap2.values())
        split["other"] = every - sum(split.values())
        split["all"] = every
        return split

    def checkpoints(self) -> int:
        xlog = self.of("XLOG")
        return xlog["CHECKPOINT_ONLINE"] + xlog["CHECKPOINT_SHUTDOWN"]


def lsn(cluster, db: str) -> str:
    return cluster.query(db, "SELECT pg_current_wal_lsn()")


def between(cluster, db: str, start: str, end: str) -> Wal:
    """The WAL from START to END (LSNs). Every record of the cluster is in it, which is
    only the bench's: the phase is its LSN range."""
    wal = Wal()
    wal.bytes = int(cluster.query(db, f"SELECT pg_wal_lsn_diff('{end}', '{start}')"))
    rows = cluster.query(db, 'SELECT "resource_manager/record_type", count, fpi_size'
                             f" FROM pg_get_wal_stats('{start}',"
                             # PostgreSQL 15 reads no further than what is flushed.
                             f" least('{end}', pg_current_wal_flush_lsn()), true)"
                             " WHERE count > 0")
    for row in rows.splitlines():
        name, count, fpi = row.split("|")
        wal.records[name.replace("+INIT", "")] += int(count)
        wal.fpi_bytes += int(fpi)
    return wal

"""
Wait-state analysis of MPI traces: Scalasca's patterns (the Scalasca architecture paper, 5.2).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.profile
import cubescale._core.trace
import numpy
import numpy.typing
import typing

__all__: list[str] = [
    "Replay",
    "add_impact",
    "analyze",
    "impact_costs",
    "impact_path_sums",
    "merge_impact",
    "pattern_names",
    "root_cause_names",
    "write_hybrid_trace",
    "write_intercomm_trace",
    "write_mpi_trace",
    "write_omp_trace",
]

class Replay:
    """
    One rank's part of the wait-state replay (analysis/replay.hpp): extraction of its locations, then matching with the records the caller exchanges between the ranks.
    """

    collective_bytes: typing.ClassVar[int] = 56
    extra_bytes: typing.ClassVar[int] = 24
    instance_value_bytes: typing.ClassVar[int] = 32
    listing_bytes: typing.ClassVar[int] = 40
    message_bytes: typing.ClassVar[int] = 56
    min_rounds: typing.ClassVar[int] = 64
    nonblocking_bytes: typing.ClassVar[int] = 64
    reduction_bytes: typing.ClassVar[int] = 24
    send_bytes: typing.ClassVar[int] = 40
    send_count_bytes: typing.ClassVar[int] = 24
    send_value_bytes: typing.ClassVar[int] = 40
    verdict_bytes: typing.ClassVar[int] = 16
    def __init__(
        self,
        trace: cubescale._core.trace.Trace,
        analyzed: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        mine: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        complete: bool = False,
        min_latency: typing.SupportsFloat | typing.SupportsIndex = 0.0,
        min_thread_latency: typing.SupportsFloat | typing.SupportsIndex | None = None,
        threads: typing.SupportsInt | typing.SupportsIndex = 1,
        chunk_records: typing.SupportsInt | typing.SupportsIndex = 65536,
    ) -> None:
        """
        Extracts the records (and the call-path profile) of `mine`; `analyzed`: every rank's locations. `complete`: also everything the one-process analysis computes beside the record patterns (analysis/replay_beside.hpp; `min_latency` in seconds for the clock condition, `min_thread_latency` for its OpenMP checks, None: min_latency); `threads`: `mine` read in as many parts at once, the same records and profile, and the steps after the pass in as many chunks of `chunk_records` records at least (tests make it small), the same report.
        """
    def add_idle_threads(self, profile: cubescale._core.profile.LocalProfile) -> None:
        """
        Last, after the impact metrics: scout's omp_idle_threads and omp_limited_parallelism of own processes below time, and their values added to time.
        """
    def answer_round(self) -> None:
        """
        In each round, after the sends came: per send received its receive's posting time (home_posted, in the order the sends came).
        """
    def any_records(self) -> bool:
        """
        Whether an own location has MPI records.
        """
    def begin_correction(
        self,
        owner: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        ranks: typing.SupportsInt | typing.SupportsIndex,
        rank: typing.SupportsInt | typing.SupportsIndex,
        homes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    ) -> list[int]:
        """
        Starts --time-correct: own collective records to their homes; returns records per rank.
        """
    def begin_sends(
        self,
        owner: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        ranks: typing.SupportsInt | typing.SupportsIndex,
    ) -> list[int]:
        """
        The message exchange in rounds: checks own sends (FormatError for a receiver nobody analyzes); returns own sends per receiver's owner.
        """
    def beside_bytes(self) -> int:
        """
        Bytes the buffers of the complete steps hold now.
        """
    def check_nonblocking_counts(
        self, all: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]
    ) -> None:
        """
        Every rank's triples: FormatError on the rank holding the first record without counterpart.
        """
    def collective_severities(self) -> None:
        """
        The collective patterns of own records from the reductions received.
        """
    def collectives_beside(self) -> None:
        """
        Before collective_severities: collective clock conditions and sync points of own records.
        """
    def collectives_beside_home(self) -> None:
        """
        Home, before reduce_collectives: per record received its clock reference and whom it waits for.
        """
    def correct_round(self) -> None:
        """
        Steps own events as far as the known values allow and fills the rows for the round's plan.
        """
    def correction_incoming_counts(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` send counts received.
        """
    def correction_incoming_enters(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The round's receive buffer of members' corrected enters, as size_round sized it (a view).
        """
    def correction_incoming_members(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` collective records received as home.
        """
    def correction_incoming_references(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The round's receive buffer of references, as size_round sized it (a view).
        """
    def correction_incoming_sends(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The round's receive buffer of send times, as size_round sized it (a view).
        """
    def correction_layout(self) -> numpy.typing.NDArray[numpy.int32]:
        """
        Per kind (sends, enters, references): counts sent, displacements, counts received, displacements (plan_round fills them; a view, until finish_correction).
        """
    def correction_outgoing_counts(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Own send counts for the receivers' owners (a view).
        """
    def correction_outgoing_enters(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Corrected collective enters for the homes (a view).
        """
    def correction_outgoing_members(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Own collective records for the homes (a view).
        """
    def correction_outgoing_references(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        References for the members' owners (a view).
        """
    def correction_outgoing_sends(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Corrected send times for the receivers' owners (a view).
        """
    def correction_peak_bytes(self) -> int:
        """
        The most bytes of records and buffers held inside finish_correction (the moves).
        """
    def correction_received_rows(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        A writable view for every rank's row for this one (until finish_correction).
        """
    def correction_rows(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        This rank's row for every rank (correct_round fills them; a view, until finish_correction).
        """
    def expect_sends(self, total: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The sends this rank receives over all rounds (each round's are paired with their receives as they come).
        """
    def extras(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` extras returned for own collective records.
        """
    def finish(self, present: collections.abc.Sequence[bool]) -> cubescale._core.profile.LocalProfile:
        """
        The LocalProfile with the metric tree of the patterns `present` on any rank.
        """
    def finish_complete(self, present: collections.abc.Sequence[bool]) -> cubescale._core.profile.LocalProfile:
        """
        The LocalProfile with every metric of the one-process analysis.
        """
    def finish_correction(self) -> tuple[int, int]:
        """
        FormatError on a cycle; moves every own record. Returns (jumps, largest jump in ticks) of own events.
        """
    def home_extras(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The extras computed as home, in the order of the records received (a view).
        """
    def home_posted(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Per send received this round its receive's posting time (8 bytes each, a view).
        """
    def home_reductions(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The reductions computed as home, in the order of the records received (a view).
        """
    def home_verdicts(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The verdicts computed as home, in the order of the records received (a view).
        """
    def incoming_collectives(
        self, records: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable byte view of `records` collective records to receive into (as home).
        """
    def incoming_listings(
        self, records: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable byte view of `records` listings to receive into (as owner).
        """
    def incoming_nonblocking(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` non-blocking collective records received.
        """
    def incoming_round(
        self, records: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable byte view of the round's `records` sends to receive (the round before's buffer, once paired).
        """
    def incoming_sends(
        self, records: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable byte view of `records` sends to receive into.
        """
    def late_receiver(self) -> None:
        """
        After match_messages: Late Receiver of the sends an MPI_Waitall/some completes (frees what it needed).
        """
    def late_receiver_after(self) -> None:
        """
        After collective_severities: adds the Late Receiver values.
        """
    def late_receiver_round(self) -> None:
        """
        With the posting times back: Late Receiver of the round's own sends; releases their records.
        """
    def local_time(self) -> list[float]:
        """
        After finish_complete: scout's local time profile of OpenMP threads against time, [row * columns + column] seconds, empty without OpenMP forks (impact_costs' and add_impact's local_time).
        """
    def match_messages(self) -> None:
        """
        Own receives against the sends received; FormatError on unmatched ones.
        """
    def messages_beside(self) -> None:
        """
        After the last round, before match_messages: Late Sender, clock condition and Late Sender sync points (releases the receives).
        """
    def nonblocking_after(self) -> None:
        """
        After late_receiver_after: the non-blocking collective patterns of own records.
        """
    def nonblocking_counts(self) -> list[int]:
        """
        (communicator, location, count) triples of own non-blocking collectives, flat.
        """
    def omp_sync_events(self) -> int:
        """
        OpenMP synchronization events (fork, team begin/end, join, barrier enter/leave, lock acquisition) of the own locations held beside the records: communication events of the memory bound.
        """
    def outgoing_collectives(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The packed collective records as bytes (a view).
        """
    def outgoing_listings(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The packed listings as bytes (a view).
        """
    def outgoing_nonblocking(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The packed non-blocking collective records as bytes (a view).
        """
    def outgoing_sends(self) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        The packed sends as bytes (a view).
        """
    def pack_collectives(
        self,
        ranks: typing.SupportsInt | typing.SupportsIndex,
        homes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [],
    ) -> list[int]:
        """
        Groups own collective records by the home rank of their instance (among `homes`, the ranks owning locations; empty: all); returns records per rank.
        """
    def pack_listings(
        self,
        owner: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        ranks: typing.SupportsInt | typing.SupportsIndex,
    ) -> list[int]:
        """
        Home, after reduce_collectives: trace.stat's listings of the instances reduced here, grouped by the rank owning the location naming each (owner[location]); returns listings per rank.
        """
    def pack_nonblocking(
        self,
        ranks: typing.SupportsInt | typing.SupportsIndex,
        homes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    ) -> list[int]:
        """
        Own non-blocking collective records grouped by the home rank of their instance; records per rank.
        """
    def pack_round(self) -> list[int]:
        """
        Releases the sends packed before, packs the round's next own sends by receiver's owner (outgoing_sends); returns records per rank.
        """
    def pack_send_counts(self) -> list[int]:
        """
        After a stall: own sends per (sender, receiver, communicator, tag) for the receivers' owners; records per rank.
        """
    def pack_sends(
        self,
        owner: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
        ranks: typing.SupportsInt | typing.SupportsIndex,
    ) -> list[int]:
        """
        Groups own sends by the rank owning the receiver (owner[location]); returns records per rank.
        """
    def parts(self) -> int:
        """
        How many parts the own locations were read in at once, a thread each (at most the threads asked for and one per process).
        """
    def path_start(self, any_records: bool) -> tuple[int, int]:
        """
        (enter of the latest MPI_Finalize or last Leave, place among analyzed) of this rank's candidate to start the critical path; place 0xFFFFFFFF: none.
        """
    def path_window_members(self) -> tuple[int, int]:
        """
        (own locations with an MPI_Init, with an MPI_Finalize): summed over the ranks for set_path_window.
        """
    def plan_round(self) -> int:
        """
        From the rows received: the layout; bit 0 some rank moved, bit 1 some rank has events left, bits 2-4 each kind some rank sends by Alltoallv (none when every rank's values are in its rows: take_values reads them there); bit 5 alone: some rank failed (its rows' column 3 negative).
        """
    def posted(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` posting times returned for the round's own sends (its exchange reversed).
        """
    def present(self) -> list[bool]:
        """
        Per pattern: whether its operations occur among own locations.
        """
    def present_complete(self) -> list[bool]:
        """
        Record patterns, OpenMP patterns, clock checked: whether each occurs among own locations.
        """
    def program_spans(self) -> list[float]:
        """
        After finish_complete: per own column the time from PROGRAM_BEGIN to PROGRAM_END in seconds (impact_costs).
        """
    def record_bytes(self) -> int:
        """
        Bytes the record buffers hold now.
        """
    def reduce_collectives(self) -> None:
        """
        Home: one reduction per collective record received; FormatError on incomplete instances.
        """
    def reduce_nonblocking(self) -> None:
        """
        Home: per record received its pattern and the time it waits for; FormatError on mixed operations.
        """
    def reductions(
        self, records: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable byte view of `records` reductions (one per own packed collective record).
        """
    def send_rounds(self, round_bytes: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Rounds this rank needs with at most `round_bytes` of packed sends per round (and at least Replay.min_rounds); every rank runs the largest number over the ranks.
        """
    def set_path_window(
        self,
        init_members: typing.SupportsInt | typing.SupportsIndex,
        finalize_members: typing.SupportsInt | typing.SupportsIndex,
    ) -> None:
        """
        Whether the critical path runs from the last MPI_Finalize back to MPI_Init (every process has them).
        """
    def size_round(self) -> None:
        """
        The receive buffers of the planned round.
        """
    def statistics(self) -> dict:
        """
        After finish_complete: own instance statistics in ticks ({pattern: {count, sum, min, max, sum_of_squares, top: [(ticks, enter, leave, cnode row, dense location)]}}) and clock-condition violations as recorded, events the correction moved.
        """
    def stats(self) -> dict:
        """
        Own events read and message / collective records extracted.
        """
    def take_listings(self) -> None:
        """
        Own: the listings received into the instance statistics.
        """
    def take_members(self) -> None:
        """
        Home: the members of its instances.
        """
    def take_send_counts(self) -> None:
        """
        After a stall, the send counts received: a receive beyond its queue's sends waits for nothing.
        """
    def take_values(self) -> None:
        """
        Takes the values received (a home's complete instances answer their members).
        """
    def verdicts(
        self, n: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A writable view for `n` verdicts returned for own non-blocking records.
        """
    def walk(
        self, at: typing.SupportsInt | typing.SupportsIndex, time: typing.SupportsInt | typing.SupportsIndex
    ) -> tuple[int, int]:
        """
        The critical path's backward walk from (location, time) while it stays on own locations; returns where it continues ((0xFFFFFFFF, 0): ended).
        """

def add_impact(
    profile: cubescale._core.profile.LocalProfile,
    paths: bytes,
    costs: bytes,
    local_time: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] = [],
) -> None:
    """
    Step 3: appends critical_path_activities, critical_imbalance_impact, inter_partition_imbalance and non_critical_path_activities (scout's) from the merged sums.
    """

def analyze(
    trace: cubescale._core.trace.Trace,
    locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    time_correct: bool = False,
    min_latency: typing.SupportsFloat | typing.SupportsIndex = 0.0,
    reread_path: bool = False,
    threads: typing.SupportsInt | typing.SupportsIndex = 1,
    root_cause: bool = False,
    chunk_records: typing.SupportsInt | typing.SupportsIndex = 65536,
    min_thread_latency: typing.SupportsFloat | typing.SupportsIndex | None = None,
) -> tuple[cubescale._core.profile.LocalProfile, dict]:
    """
    The call-path profile of `locations` (every peer of their messages and collectives among them) with Scalasca's wait-state metrics below `time` and clock_violations: (LocalProfile, stats dict with events read, message and collective records, clock-condition violations as recorded, events moved by the time correction (time_correct=True; min_latency in seconds, min_thread_latency for the OpenMP checks, None: min_latency), the bytes of the critical path's time lines at the end of the pass and the locations on the path read a second time (critical_path_bytes, critical_path_reread; OpenMP synchronization events, omp_sync_events; reread_path=True, for tests and benchmarks: every location on the path read again instead), and per pattern name its instance statistics; threads: how many threads read the events, whole processes each, and run the steps after the pass, chunks of locations of chunk_records records at least each (tests make it small); the report the same). root_cause=True: scout's delay costs and wait-state propagation too (root_cause_points: their synchronization points, root_cause_bytes: what they held, root_cause_read_seconds and root_cause_seconds: wall time of its second read of the events and of all of it; with time_correct on the corrected times); seconds: the wall seconds of each step, in the order they ran ({step: seconds}). FormatError on inconsistent communication.
    """

def impact_costs(
    profile: cubescale._core.profile.LocalProfile,
    paths: bytes,
    program_spans: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex],
    local_time: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] = [],
) -> bytes:
    """
    Step 2: with the merged path sums, per call path the imbalance costs and headrooms of this profile's locations (program_spans: per column PROGRAM_BEGIN to PROGRAM_END in seconds, Replay.program_spans; local_time: Replay.local_time).
    """

def impact_path_sums(profile: cubescale._core.profile.LocalProfile) -> bytes:
    """
    Step 1 of the performance-impact metrics: per call path this profile's critical_path summed over its locations (a blob for merge_impact).
    """

def merge_impact(blobs: collections.abc.Sequence[bytes]) -> bytes:
    """
    Every rank's blobs of one step, summed exactly per call path.
    """

def pattern_names() -> list[str]:
    """
    Unique names of the patterns the analysis computes (Scalasca's).
    """

def root_cause_names() -> list[str]:
    """
    Unique names of the root-cause metrics (scout's; analyze(root_cause=True)), in scout's order.
    """

def write_hybrid_trace(
    directory: str,
    name: str,
    ranks: collections.abc.Sequence[dict],
    threads: typing.SupportsInt | typing.SupportsIndex,
    end: typing.SupportsInt | typing.SupportsIndex,
) -> int:
    """
    Writes <directory>/<name>.otf2: per rank (MPI process of `threads` OpenMP threads) a dict with 'mpi': the master's MPI calls as write_mpi_trace's, and 'regions': its parallel regions as write_omp_trace's, each call outside the regions or inside its master's team between the master's calls; main runs on every master from 0 to `end` ns. Returns the events written.
    """

def write_intercomm_trace(
    directory: str,
    name: str,
    ranks: collections.abc.Sequence[collections.abc.Sequence[tuple]],
    group_a: typing.SupportsInt | typing.SupportsIndex,
    end: typing.SupportsInt | typing.SupportsIndex,
) -> int:
    """
    Writes <directory>/<name>.otf2 with an inter-communicator between the first group_a ranks and the others: per rank a list of (call, enter_ns, leave_ns[, peer]), calls 'MPI_Send' / 'MPI_Recv' (on the inter-communicator, peer a rank of the other group), 'MPI_Barrier' (on it), 'MPI_Allreduce' (on MPI_COMM_WORLD), inside main from 0 to `end` ns. Returns the events written.
    """

def write_mpi_trace(
    directory: str,
    name: str,
    ranks: collections.abc.Sequence[collections.abc.Sequence[tuple]],
    end: typing.SupportsInt | typing.SupportsIndex,
) -> int:
    """
    Writes <directory>/<name>.otf2: per rank a list of (call, enter_ns, leave_ns, peers, tag[, bytes[, bytes_received]]), calls such as 'MPI_Send', 'MPI_Ssend', 'MPI_Isend', 'MPI_Irecv', 'MPI_Wait' (completes the open MPI_Isend's too), 'MPI_Recv', 'MPI_Waitall', 'MPI_Barrier', 'MPI_Bcast' (peers = [root]), 'MPI_Allreduce', 'MPI_Alltoallv', 'MPI_Iscan', inside main from 0 to `end` ns. bytes (default 8) is the message or collective payload (a collective's bytes sent; bytes_received defaults to bytes); a collective's tag 1 puts it on MPI_COMM_SELF, tag 2 on MPI_COMM_REVERSED (every process, rank r being process P-1-r). Returns the events written.
    """

def write_omp_trace(
    directory: str,
    name: str,
    regions: collections.abc.Sequence[dict],
    threads: typing.SupportsInt | typing.SupportsIndex,
    end: typing.SupportsInt | typing.SupportsIndex,
    main: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex] | None = None,
) -> int:
    """
    Writes <directory>/<name>.otf2: one process of `threads` threads; per parallel region a dict with 'fork', 'join' (ns) and 'threads': per thread of the team a list of (call, enter_ns, leave_ns) for 'ibarrier', 'barrier' or (call, enter_ns, leave_ns, acquire_ns, lock) for 'critical', 'lock', 'mutex', 'condwait'; tasks as ('task_create', enter_ns, leave_ns, creator, generation), ('task_begin' | 'task_end', ns, creator, generation, untied), ('task_switch', ns, creator, generation), ('enter' | 'leave', ns, 'taskwait' | 'ibarrier' | 'work'); optional 'begin' and 'end': per thread its team begin and end (default fork and join). `main` (enter_ns, leave_ns): the master records PROGRAM_BEGIN at 0 and PROGRAM_END at `end` around main's visit, with the program's region. Returns the events written.
    """

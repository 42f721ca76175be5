#include "cubescale/analysis/extraction.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "cubescale/common/append_whole.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string seconds(const trace::Definitions& defs, std::uint64_t ticks) {
  const double s = static_cast<double>(ticks - std::min(ticks, defs.clock.offset)) /
                   static_cast<double>(defs.clock.resolution);
  return std::to_string(s) + " s";
}

// Room for as many as the previous location's list had: locations of a run tend to be alike,
// which saves most of the lists' regrowth (copies and fresh pages).
template <typename List, typename Member>
void reserve_like_previous(std::vector<List>& lists, Member member) {
  if (lists.size() > 1) (lists.back().*member).reserve((lists[lists.size() - 2].*member).size());
}

}  // namespace

RecordExtractor::RecordExtractor(const trace::Trace& trace, bool extras)
    : trace_(trace), defs_(trace.definitions()), extras_(extras) {
  // Ranks of MPI_COMM_WORLD are positions in the MPI comm_locations group (Score-P writes one).
  for (const auto& g : defs_.groups) {
    if (g.type != "comm_locations" || g.paradigm != "mpi") continue;
    for (auto id : g.members) rank_location_.push_back(defs_.location(id));
    break;
  }
  std::vector<bool> rank_named(defs_.locations.size(), false), ranked_process(defs_.location_groups.size(), false);
  for (auto l : rank_location_) {
    if (l >= rank_named.size()) continue;
    rank_named[l] = true;
    if (defs_.locations[l].group < ranked_process.size()) ranked_process[defs_.locations[l].group] = true;
  }
  other_thread_of_.assign(defs_.locations.size(), false);
  for (std::size_t l = 0; l < defs_.locations.size(); ++l) {
    const auto group = defs_.locations[l].group;
    other_thread_of_[l] = !rank_named[l] && group < ranked_process.size() && ranked_process[group];
  }
  // Per communicator: its ranks' locations (kNone where undefined), or whether it is a self one.
  comm_locations_.resize(defs_.communicators.size());
  comm_remote_.resize(defs_.communicators.size());
  sorted_a_.resize(defs_.communicators.size());
  sorted_b_.resize(defs_.communicators.size());
  comm_self_.assign(defs_.communicators.size(), false);
  auto locations_of = [&](const trace::Group& g) {
    std::vector<std::uint32_t> out;
    for (auto world : g.members) out.push_back(world < rank_location_.size() ? rank_location_[world] : kNone);
    return out;
  };
  for (std::size_t c = 0; c < defs_.communicators.size(); ++c) {
    const auto& comm = defs_.communicators[c];
    if (comm.group == kNone || comm.group >= defs_.groups.size()) continue;
    const auto& g = defs_.groups[comm.group];
    if (comm.inter) {  // a peer is in the other group (peers_on_inter)
      if (comm.remote_group >= defs_.groups.size()) continue;  // (kNone too: undefined)
      const auto& b = defs_.groups[comm.remote_group];
      if (g.type == "comm_self" || b.type == "comm_self") continue;  // (OTF2 allows it; Score-P writes MPI groups)
      comm_locations_[c] = locations_of(g);
      comm_remote_[c] = locations_of(b);
      sorted_a_[c] = comm_locations_[c], sorted_b_[c] = comm_remote_[c];
      std::sort(sorted_a_[c].begin(), sorted_a_[c].end());
      std::sort(sorted_b_[c].begin(), sorted_b_[c].end());
      continue;
    }
    comm_self_[c] = g.type == "comm_self";
    if (comm_self_[c]) continue;
    comm_locations_[c] = locations_of(g);
  }
  // Scalasca's classes of MPI calls by region name (pearl's classification, case-insensitive).
  regions_.resize(defs_.regions.size() + 1);  // the last: an unknown region
  for (std::size_t r = 0; r < defs_.regions.size(); ++r) {
    const auto name = lower(defs_.regions[r].name);
    auto& c = regions_[r];
    c.blocking_send = name == "mpi_send" || name == "mpi_ssend";
    if (name == "mpi_init" || name == "mpi_init_thread") c.init_exit = kInitOp;
    if (name == "mpi_finalize") c.init_exit = kFinalizeOp;
    c.test = name.rfind("mpi_test", 0) == 0;
    if (c.test) c.kind = CallKind::Test;
    else if (name == "mpi_waitall" || name == "mpi_waitany" || name == "mpi_waitsome") c.kind = CallKind::WaitMulti;
    if (c.blocking_send) c.completion = SendCompletionKind::Blocking;
    if (name == "mpi_wait" || name == "mpi_waitany") c.completion = SendCompletionKind::WaitSingle;
    if (name == "mpi_waitall" || name == "mpi_waitsome") c.completion = SendCompletionKind::WaitMulti;
  }
}

void RecordExtractor::begin_location(std::uint32_t location) {
  records_.push_back({});
  records_.back().location = location;
  // Unused room is never touched (no memory); see reserve_like_previous.
  reserve_like_previous(records_, &LocationRecords::sends);
  reserve_like_previous(records_, &LocationRecords::receives);
  reserve_like_previous(records_, &LocationRecords::collectives);
  if (extras_) {
    point_to_point_.push_back({});
    point_to_point_.back().location = location;
    reserve_like_previous(point_to_point_, &PointToPointExtras::completion_enter);
    reserve_like_previous(point_to_point_, &PointToPointExtras::receive_posted);
    nonblocking_.push_back({});
    nonblocking_.back().location = location;
  }
  stack_.clear();
  pending_.clear();
  open_isends_.clear();
  open_irecvs_.clear();
  open_collectives_.clear();
  calls_ = started_ = 0;
  last_time_ = 0;
  instances_.assign(defs_.communicators.size() + 2, 0);
  other_thread_ = location < other_thread_of_.size() && other_thread_of_[location];  // (no MPI ranks: none)
}

void RecordExtractor::threads_refused(const trace::Event& e) const {
  fail(trace_, e.location, e.position, e.time,
       std::string(trace::event_type_name(e.type)) +
           " on a thread other than the one its MPI rank names (the one that called MPI_Init): MPI calls of other "
           "threads (MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE) cannot be paired; the analysis takes "
           "MPI_THREAD_FUNNELED traces, as Scalasca's scout does");
}

std::uint32_t& RecordExtractor::instances(std::uint32_t communicator) {
  if (communicator < defs_.communicators.size()) return instances_[communicator];
  return instances_[defs_.communicators.size() + (communicator == kInitCommunicator ? 0 : 1)];
}

std::uint32_t RecordExtractor::peer_location(std::uint32_t communicator, std::uint32_t rank,
                                             const trace::Event& e) const {
  auto fail = [&](const std::string& what) {
    throw FormatError(trace_.path(), trace_.event_member(e.location), e.position,
                      std::string(trace::event_type_name(e.type)) + " at " + seconds(defs_, e.time) + ": " + what);
  };
  // The common case first, from the table built once (no string compares per event).
  if (communicator < comm_locations_.size() && !inter(communicator)) {
    const auto& table = comm_locations_[communicator];
    if (comm_self_[communicator] && rank == 0) return e.location;
    if (rank < table.size() && table[rank] != kNone) return table[rank];
  }
  bool remote = false;
  if (inter(communicator)) {
    if (sorted_a_[communicator].empty() || sorted_b_[communicator].empty())
      fail("inter-communicator without its two groups of MPI ranks");
    const auto* peers = peers_on_inter(communicator, e.location);
    if (!peers) fail("a location in neither group of its inter-communicator");
    if (rank < peers->size() && (*peers)[rank] != kNone) return (*peers)[rank];
    remote = peers == &comm_remote_[communicator];
  }
  if (communicator == kNone || communicator >= defs_.communicators.size()) fail("no communicator");
  const auto group = remote ? defs_.communicators[communicator].remote_group : defs_.communicators[communicator].group;
  if (group == kNone || group >= defs_.groups.size()) fail("communicator without a group");
  const auto& g = defs_.groups[group];
  if (g.type == "comm_self") fail("rank " + std::to_string(rank) + " on a self communicator");
  if (rank >= g.members.size()) fail("rank " + std::to_string(rank) + " outside its communicator of " +
                                     std::to_string(g.members.size()));
  fail("rank " + std::to_string(g.members[rank]) + " has no location");
  return kNone;
}

const std::vector<std::uint32_t>* RecordExtractor::peers_on_inter(std::uint32_t communicator,
                                                                  std::uint32_t location) const {
  // A member of group A names ranks of group B, and the other way (MPI keeps them disjoint).
  const auto& a = sorted_a_[communicator];
  if (std::binary_search(a.begin(), a.end(), location)) return &comm_remote_[communicator];
  const auto& b = sorted_b_[communicator];
  if (std::binary_search(b.begin(), b.end(), location)) return &comm_locations_[communicator];
  return nullptr;
}

void RecordExtractor::event(const trace::Event& e, std::uint32_t cnode) {
  last_time_ = e.time;
  switch (e.type) {
    case trace::EventType::Enter: stack_.push_back({e.time, e.region, calls_++, cnode, false}); break;
    case trace::EventType::Leave: leave(e, cnode); break;
    case trace::EventType::MpiSend:
    case trace::EventType::MpiIsend:
    case trace::EventType::MpiRecv:
    case trace::EventType::MpiIrecv:
      if (other_thread_) threads_refused(e);
      message(e, cnode);
      break;
    case trace::EventType::MpiCollectiveEnd:
      if (other_thread_) threads_refused(e);
      collective(e, cnode);
      break;
    case trace::EventType::MpiIsendComplete:
      if (other_thread_) threads_refused(e);
      if (!stack_.empty()) stack_.back().p2p = true;
      if (extras_) isend_complete(e);
      break;
    case trace::EventType::MpiIrecvRequest:
      if (other_thread_) threads_refused(e);
      if (extras_) open_irecvs_.push_back({e.request, enter_or(e.time)});
      break;
    case trace::EventType::NonBlockingCollectiveRequest:
      if (other_thread_) threads_refused(e);
      if (extras_) open_collectives_.push_back({e.request, enter_or(e.time), e.position, started_++});
      break;
    case trace::EventType::NonBlockingCollectiveComplete:
      if (other_thread_) threads_refused(e);
      if (extras_) nonblocking_complete(e, cnode);
      break;
    default: break;
  }
}

void RecordExtractor::leave(const trace::Event& e, std::uint32_t cnode) {
  close(e.time);
  if (stack_.empty()) return;
  const auto& frame = stack_.back();
  if (const auto op = region(frame.region).init_exit) {
    CollectiveRecord r;
    r.enter = frame.enter;
    r.leave = r.time = e.time;
    r.position = e.position;
    r.location = e.location;
    r.op = op;
    r.communicator = op == kInitOp ? kInitCommunicator : kFinalizeCommunicator;
    r.cnode = cnode;
    r.instance = instances(r.communicator)++;
    append_whole_fourfold(records_.back().collectives, r);
  }
  stack_.pop_back();
}

void RecordExtractor::message(const trace::Event& e, std::uint32_t cnode) {
  auto& out = records_.back();
  const bool in_call = !stack_.empty();
  const bool send = e.type == trace::EventType::MpiSend || e.type == trace::EventType::MpiIsend;
  MessageRecord r;
  r.enter = enter_or(e.time);
  r.leave = e.time;  // until the call is left
  r.time = e.time;
  r.position = e.position;
  r.location = e.location;
  r.peer = peer_location(e.communicator, e.partner, e);
  r.communicator = e.communicator;
  r.tag = e.tag;
  r.empty = e.bytes == 0;
  r.cnode = cnode;
  r.call = in_call ? stack_.back().call : calls_++;
  r.call_kind = in_call ? region(stack_.back().region).kind : CallKind::Single;
  if (in_call) stack_.back().p2p = true;
  // What Late Receiver finds in the record itself, and what it needs beside it (late_receiver.hpp).
  Beside beside = Beside::Extra;
  if (e.type == trace::EventType::MpiRecv) beside = Beside::Own;
  if (e.type == trace::EventType::MpiSend)
    beside = in_call && region(stack_.back().region).blocking_send ? Beside::Own : Beside::None;
  r.beside_bits = static_cast<std::uint8_t>(beside);
  auto& list = send ? out.sends : out.receives;
  if (e.type == trace::EventType::MpiIsend && extras_) {
    // Its leave, call path and number are those of the call completing it (isend_complete):
    // none until then.
    SendCompletion none;
    none.empty = r.empty;
    hold_completion(r, none);
    open_isends_.push_back({e.request, list.size(), point_to_point_.back().completion_enter.size()});
    point_to_point_.back().completion_enter.push_back(r.enter, kNoTime);
    append_whole_fourfold(list, r);
    return;
  }
  if (e.type == trace::EventType::MpiIrecv && extras_) irecv(e, r.enter);
  append_whole_fourfold(list, r);
  if (in_call) pending_.push_back({send ? List::Sends : List::Receives, list.size() - 1, stack_.size()});
}

// The MPI_Isend's record takes its completing call (the innermost open one; its leave when it
// is left); the call's enter goes beside. Outside any call it counts for nothing.
void RecordExtractor::isend_complete(const trace::Event& e) {
  auto it = std::find_if(open_isends_.rbegin(), open_isends_.rend(), [&](const auto& s) { return s.request == e.request; });
  if (it == open_isends_.rend()) return;
  const auto open = *it;
  open_isends_.erase(std::next(it).base());
  auto& record = records_.back().sends[open.send];
  SendCompletion c;
  if (!stack_.empty()) {
    const auto& f = stack_.back();
    c = {f.enter, f.enter, f.cnode, f.call, region(f.region).completion};
    pending_.push_back({List::Sends, open.send, stack_.size()});
    point_to_point_.back().completion_enter.set(open.entry, record.enter, f.enter);
  }
  c.empty = record.empty;
  hold_completion(record, c);
}

// Posted when the call holding its MPI_IRECV_REQUEST was entered; without one (older
// measurements) when the call completing it was.
void RecordExtractor::irecv(const trace::Event& e, std::uint64_t enter) {
  std::uint64_t posted = enter_or(e.time);
  auto it = std::find_if(open_irecvs_.rbegin(), open_irecvs_.rend(), [&](const auto& p) { return p.first == e.request; });
  if (it != open_irecvs_.rend()) {
    posted = it->second;
    open_irecvs_.erase(std::next(it).base());
  }
  point_to_point_.back().receive_posted.push_back(enter, posted);
}

void RecordExtractor::collective(const trace::Event& e, std::uint32_t cnode) {
  // Collectives on inter-communicators (two groups, roots named MPI_ROOT / MPI_PROC_NULL on one
  // side) have no pattern here: no record (docs/analysis.md).
  if (inter(e.communicator)) return;
  auto& out = records_.back();
  CollectiveRecord r;
  r.enter = enter_or(e.time);
  r.leave = e.time;
  r.time = e.time;
  r.position = e.position;
  r.location = e.location;
  r.communicator = e.communicator;
  r.op = e.tag;
  r.sends = e.bytes > 0;
  r.receives = e.bytes_received > 0;
  r.self = e.communicator < comm_self_.size() && comm_self_[e.communicator];
  peer_location(e.communicator, 0, e);  // raises unless the communicator and its group are defined
  r.root = e.partner == kNone ? kNone : peer_location(e.communicator, e.partner, e);
  r.cnode = cnode;
  r.instance = instances(r.communicator)++;
  append_whole_fourfold(out.collectives, r);
  if (!stack_.empty()) pending_.push_back({List::Collectives, out.collectives.size() - 1, stack_.size()});
}

void RecordExtractor::nonblocking_complete(const trace::Event& e, std::uint32_t cnode) {
  if (inter(e.communicator)) {  // as collective(): no record; its request is done with
    const auto it = std::find_if(open_collectives_.begin(), open_collectives_.end(),
                                 [&](const Started& s) { return s.request == e.request; });
    if (it != open_collectives_.end()) open_collectives_.erase(it);
    return;
  }
  const bool in_call = !stack_.empty();
  NonBlockingRecord r;
  r.enter = r.leave = enter_or(e.time);
  r.start = r.enter;  // without its request event: started when the completion began
  r.order = started_++;
  std::uint64_t start_position = e.position;
  auto it = std::find_if(open_collectives_.begin(), open_collectives_.end(),
                         [&](const Started& s) { return s.request == e.request; });
  if (it != open_collectives_.end()) {
    r.start = it->start;
    r.order = it->order;
    start_position = it->position;
    open_collectives_.erase(it);
  }
  r.position = e.position;
  r.location = e.location;
  r.communicator = e.communicator;
  r.op = e.tag;
  r.root_rank = e.partner;
  r.cnode = cnode;
  r.call = in_call ? stack_.back().call : calls_++;
  r.test = in_call && region(stack_.back().region).test;
  auto& out = nonblocking_.back();
  append_whole(out.records, r);  // doubling: the replay counts this list's room (beside_bytes)
  out.start_positions.push_back(start_position);
  if (in_call) pending_.push_back({List::NonBlocking, out.records.size() - 1, stack_.size()});
}

// Records made inside the frame being left get its leave time (a non-blocking collective's
// completion also whether its call completed messages too).
void RecordExtractor::close(std::uint64_t leave) {
  auto& out = records_.back();
  while (!pending_.empty() && pending_.back().depth == stack_.size()) {
    const auto p = pending_.back();
    pending_.pop_back();
    switch (p.list) {
      case List::Sends: out.sends[p.index].leave = leave; break;
      case List::Receives: out.receives[p.index].leave = leave; break;
      case List::Collectives: out.collectives[p.index].leave = leave; break;
      case List::NonBlocking: {
        auto& r = nonblocking_.back().records[p.index];
        r.leave = leave;
        r.only_collectives = !stack_.back().p2p;
        break;
      }
    }
  }
}

// A stream cut short: the profile closes open frames at the last event; so do the records.
void RecordExtractor::end_location(std::uint32_t) {
  while (!stack_.empty()) {
    close(last_time_);
    stack_.pop_back();
  }
  if (!extras_) return;
  // Growth by doubling leaves up to half of the lists unused; they are kept to the replay's
  // memory peak (the message exchange), so give it back now, while they are small beside the
  // records still growing (with the room reserved like the previous location's, usually a
  // no-op); and the completions farther than a distance allows in entry order.
  auto& x = point_to_point_.back();
  x.completion_enter.finish();
  x.receive_posted.finish();
}

void RecordExtractor::absorb(trace::CallPathObserver& other) {
  auto& later = dynamic_cast<RecordExtractor&>(other);
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    from.clear();
  };
  append(records_, later.records_);
  append(point_to_point_, later.point_to_point_);
  append(nonblocking_, later.nonblocking_);
}

void RecordExtractor::rows(const std::vector<std::uint32_t>& rows) {
  auto map = [&](std::uint32_t& c) {
    if (c != kNone && c < rows.size()) c = rows[c];
  };
  for (auto& l : records_) {
    for (auto& r : l.sends) map(r.cnode);
    for (auto& r : l.receives) map(r.cnode);
    for (auto& r : l.collectives) map(r.cnode);
  }
  for (auto& l : nonblocking_)
    for (auto& r : l.records) map(r.cnode);
}

}  // namespace cubescale::analysis

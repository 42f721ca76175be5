#pragma once
// Appends a record with bit-fields to a growing list as one block copy. Built field by field,
// such a record was otherwise written straight into the list, and GCC's bit-field stores read
// their word first (to keep its other bits, even where every bit is named): on a fresh page
// that is a read fault mapping the zero page, then a copy-on-write fault that flushes the TLB
// of every thread of the process (an interrupt to each core where the analysis reads in
// parallel). On the 50 M-event ring: 28 k page faults fewer, a quarter less kernel time.
#include <vector>

namespace cubescale {

template <typename T>
void append_whole(std::vector<T>& list, T record) {
  asm volatile("" : "+m"(record));  // the record exists whole in memory: the copy is a block copy
  list.push_back(record);
}

}  // namespace cubescale

//! Packed leaves: a leaf's entries in about 5 bytes each.
//!
//! A data node spends a 16-byte slot (model key and payload) per slot at
//! 75-85% density, about 20 bytes an entry. A packed leaf keeps, per entry,
//! in key order and without gaps:
//! - a **hint** (1 byte): the entry's model key minus its window's floor,
//!   shifted right by the window's shift (the smallest shift that keeps the
//!   window's last entry at or below 255 when the window is built);
//! - a **word** (4 bytes, or 21 bits when narrow): the payload, whose high
//!   32 bits become a slot into the leaf's group table (the word's top
//!   bits) and whose low 32 bits, rotated left by one, fill the rest (the
//!   rotation moves the low half's top bit, the engine's tombstone flag, to
//!   bit 0, so small offsets need few bits); a narrow word holds them minus
//!   its group's base, which the table holds beside the group ([`WordForm`]:
//!   a compacted run's records that one leaf names lie close together);
//! - a **mark** (2 bits, four to a byte): bits of a hash of the entry's
//!   model key, so that a lookup of an absent key whose hint ties with an
//!   entry's (a neighbour of a present key, say) is told apart from it
//!   without reading the entry's record, 3 times in 4;
//!
//! and per window of up to [`WINDOW`] consecutive entries its floor (a lower
//! bound of its entries' model keys, at least every model key before the
//! window), its first entry's position and its shift, with a linear model
//! of the floors that predicts a model key's window. Hints are monotone in
//! key order within a window, so an entry whose hint is below the one a
//! key's model key gives in that window is below the key, one above is
//! above it, and only equal hints ("ties") need the full key. A lookup
//! reads a floor or two, a line of hints and the word of each tie; for a
//! key that is present there is usually one tie, returned without reading
//! any key (see [`PackedLeaf::get_candidate`]), as a data node returns its
//! only entry of a model key; ties whose marks differ from the key's are
//! not the key. A window that would hold more than
//! [`MAX_TIES`] ties (clustered keys beside far ones) is split in two.
//!
//! Changes, all by the index's single writer:
//! - an overwrite or a repointed payload (compaction) is stored atomically
//!   into the entry's word when the payload's group is in the table or the
//!   table has a free slot (the group is published before the word, so a
//!   reader that sees the word sees the group); otherwise a copy with a
//!   bigger table;
//! - a removal: a copy without the entry (floors stay lower bounds);
//! - a new key: a copy with the entry, its hint computed from its own model
//!   key in the window that takes it; past the end of a window whose hints
//!   it would outrun, it starts a window of its own (appends read no key);
//!   a window grown crowded (twice [`WINDOW`] entries, or a run of ties) is
//!   rebuilt from its entries' keys, read through the resolver. A leaf of
//!   [`MAX_PACKED_KEYS`] entries takes no more: the writer turns it back
//!   into a data node ([`PackedLeaf::unpack`], which reads every entry's
//!   key) and splits it as any full data node.

use std::ops::{ControlFlow, Range};
use std::sync::atomic::{AtomicU32, Ordering};

use rustc_hash::FxHashMap;

use super::KeyResolver;
use super::cost;
use super::data_node::DataNode;
use super::model::LinearModel;
use super::packed_arrays::{
    EntryEdit, Frame, MARK_BITS, NARROW_WORD_BITS, PackedArrays, Parts, WIDE_WORD_BITS,
};
use super::projection::Projection;

/// Entries per window when a leaf is packed. 32 hints fill half a cache
/// line, and 32 entries spread over 256 hint values leave few ties.
pub(crate) const WINDOW: usize = 32;

/// Most groups (distinct high payload halves: in the engine, segments) a
/// leaf may hold; a leaf whose entries lie in more stays a data node.
const MAX_GROUPS: usize = 128;

/// Most entries with one hint in one window: a window that would hold
/// more is split in two (down to windows of this many entries, where keys
/// equal in the eight bytes the projection reads still tie, as they do in
/// a data node).
const MAX_TIES: usize = 8;

/// Most entries a packed leaf takes; an insert past it unpacks the leaf so
/// that the writer's structure changes split it.
pub(crate) const MAX_PACKED_KEYS: usize = 2048;

/// A run of consecutive entries sharing a floor and a shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    /// At most the model key of every entry in the window, and at least
    /// that of every entry before it.
    floor: u64,
    /// Position of the window's first entry.
    start: u32,
    /// Right shift from `model key - floor` to hint.
    shift: u8,
}

impl Window {
    /// The window's place: first position (high 24 bits) and shift.
    fn place(&self) -> u32 {
        (self.start << 8) | u32::from(self.shift)
    }
}

/// Which word widths a leaf built anew may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Widths {
    /// Narrow words if every payload fits one, else wide: a leaf packed
    /// from entries at rest (an open, a data node packed when quiet).
    NarrowIfFits,
    /// Wide words, with slot numbers for twice the groups if the values
    /// leave room: a copy of a leaf whose new payload fit no word. Writes
    /// keep coming to such a leaf (a log segment's offsets grow past any
    /// base, each compaction pass brings a segment), and each copy that
    /// encodes every word anew holds up the index's writer.
    Wide,
}

/// How a leaf's words encode payloads: a slot into the group table in a
/// word's top bits, below it the value. A wide word (32 bits) holds the
/// payload's rotated low half as it is; a narrow one (21 bits) holds it
/// minus its slot's base: the least rotated low half (tombstone bit
/// cleared) of the payloads the slot took when the table was built (a
/// group whose payloads lie far apart takes several slots), or of the
/// first payload stored into it later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WordForm {
    /// Bits of a word: [`WIDE_WORD_BITS`] or [`NARROW_WORD_BITS`].
    word_bits: u32,
    /// Bits of a word below its slot.
    value_bits: u32,
}

impl WordForm {
    /// The form of `word_bits`-bit words for a table of `capacity` slots.
    fn for_capacity(word_bits: u32, capacity: usize) -> Self {
        let slot_bits = capacity.next_power_of_two().trailing_zeros().max(1);
        WordForm {
            word_bits,
            value_bits: word_bits - slot_bits,
        }
    }

    /// Whether each group has a base (narrow words).
    #[inline]
    fn based(self) -> bool {
        self.word_bits == NARROW_WORD_BITS
    }

    /// 32-bit table elements a slot takes: the group, and its base if
    /// the words are narrow (the two share a cell, stored at once).
    #[inline]
    fn stride(self) -> usize {
        1 + usize::from(self.based())
    }

    /// Most slots a word's slot bits can name.
    fn slot_capacity(self) -> usize {
        1 << (self.word_bits - self.value_bits)
    }

    /// Whether `value` fits below the slot bits.
    #[inline]
    fn fits(self, value: u32) -> bool {
        u64::from(value) >> self.value_bits == 0
    }

    /// The word of `value` in `slot`.
    #[inline]
    fn word(self, slot: usize, value: u32) -> u32 {
        ((slot as u32) << self.value_bits) | value
    }
}

/// How a leaf's words name payloads: the group table's slots in use (the
/// table itself lies in the leaf's arrays) and the words' form.
#[derive(Debug)]
struct Groups {
    /// Slots in use; slots `used..` are free.
    used: AtomicU32,
    /// How the words encode payloads.
    form: WordForm,
}

/// A group table being built for a new leaf.
#[derive(Debug)]
struct GroupDraft {
    /// By slot, the high payload half, then its base if the form has
    /// bases; slots `used..` are free (zero).
    table: Vec<u32>,
    /// Slots in use.
    used: usize,
    /// How the words encode payloads.
    form: WordForm,
}

impl GroupDraft {
    /// A table holding the groups of `payloads` with one free slot, and
    /// the payloads' words: narrow words if `widths` allows and the
    /// payloads fit them, else wide words if every low half fits beside a
    /// slot number.
    fn encoding(payloads: &[u64], widths: Widths) -> Option<(Self, Vec<u32>)> {
        let mut groups = PayloadGroups::of(payloads)?;
        let narrow = match widths {
            Widths::NarrowIfFits => groups.narrow_slots(),
            Widths::Wide => None,
        };
        let (form, table) = match narrow {
            Some(narrow) => narrow,
            None => (groups.wide_form(widths)?, groups.wide_slots()),
        };
        let mut words = vec![0; payloads.len()];
        let mut draft = GroupDraft {
            table: Vec::with_capacity((table.len() + 1) * form.stride()),
            used: table.len(),
            form,
        };
        for (slot, (high, base, members)) in table.into_iter().enumerate() {
            for (low, at) in members {
                words[at as usize] = form.word(slot, low - base);
            }
            draft.push_slot(high, base);
        }
        draft.push_slot(0, 0);
        Some((draft, words))
    }

    /// Appends a slot holding `high` (and `base`, if the form has bases).
    fn push_slot(&mut self, high: u32, base: u32) {
        self.table.push(high);
        if self.form.based() {
            self.table.push(base);
        }
    }

    /// Number of slots, free ones included.
    fn slots(&self) -> usize {
        self.table.len() / self.form.stride()
    }

    /// Slot `s`'s group and base.
    fn slot(&self, s: usize) -> (u32, u32) {
        match self.form.based() {
            true => (self.table[2 * s], self.table[2 * s + 1]),
            false => (self.table[s], 0),
        }
    }

    /// A copy of `leaf`'s table with room for `capacity` groups (at least
    /// those in use).
    fn of_leaf(leaf: &PackedLeaf, capacity: usize) -> Self {
        let used = leaf.groups.used.load(Ordering::Relaxed) as usize;
        let form = leaf.groups.form;
        let mut draft = GroupDraft {
            table: Vec::with_capacity(capacity.max(used) * form.stride()),
            used,
            form,
        };
        for slot in 0..capacity.max(used) {
            let (high, base) = match slot < used {
                true => leaf.group_slot(slot),
                false => (0, 0),
            };
            draft.push_slot(high, base);
        }
        draft
    }

    /// A copy of `leaf`'s table that holds `payload`'s group (grown by one
    /// group and a free slot if it must), and `payload`'s word in it;
    /// `None` if the slot numbers or the value bits do not allow it (the
    /// caller encodes every word anew).
    fn of_leaf_taking(leaf: &PackedLeaf, payload: u64) -> Option<(Self, u32)> {
        let used = leaf.groups.used.load(Ordering::Relaxed) as usize;
        let slots = leaf.group_slot_count();
        let form = leaf.groups.form;
        let present = slot_holding(payload, form, used, |s| leaf.group_slot(s)).is_some();
        let capacity = match present || used < slots {
            true => slots,
            false => used + 2,
        };
        if capacity > form.slot_capacity() {
            return None;
        }
        let mut copy = Self::of_leaf(leaf, capacity);
        let word = copy.encode(payload)?;
        Some((copy, word))
    }

    /// The word for `payload`, its group taking the free slot if it is new.
    fn encode(&mut self, payload: u64) -> Option<u32> {
        let mut taken = None;
        let word = encode_word(
            payload,
            self.form,
            self.used,
            self.slots(),
            |s| self.slot(s),
            |slot, group| taken = Some((slot, group)),
        );
        if let Some((slot, (high, base))) = taken {
            let at = slot * self.form.stride();
            self.table[at] = high;
            if self.form.based() {
                self.table[at + 1] = base;
            }
            self.used += 1;
        }
        word
    }
}

/// A leaf's payloads by group (high half), to lay out its group table.
struct PayloadGroups {
    /// Each group's high half and its payloads' rotated low halves with
    /// their positions, in the order the groups first appear.
    groups: Vec<(u32, Vec<(u32, u32)>)>,
    /// The rotated low halves of every payload, or-ed.
    widest: u32,
}

/// A group-table slot being laid out: its high half, its base, and the
/// rotated low halves and positions of the payloads it names.
type SlotLayout = (u32, u32, Vec<(u32, u32)>);

impl PayloadGroups {
    /// `payloads` by group; `None` past [`MAX_GROUPS`] groups.
    fn of(payloads: &[u64]) -> Option<Self> {
        // Slots by group: a leaf of compacted data names every run (32 to
        // 64 in a large database), in no order a scan of the groups would
        // favour.
        let mut index: FxHashMap<u32, usize> = FxHashMap::default();
        let mut groups: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
        let mut widest = 0;
        for (at, &p) in payloads.iter().enumerate() {
            let (high, low) = ((p >> 32) as u32, rotated_low(p));
            let g = *index.entry(high).or_insert(groups.len());
            if g == groups.len() {
                if g == MAX_GROUPS {
                    return None;
                }
                groups.push((high, Vec::new()));
            }
            groups[g].1.push((low, at as u32));
            widest |= low;
        }
        Some(PayloadGroups { groups, widest })
    }

    /// The form of wide words for these groups (with room for twice the
    /// groups if `widths` asks for it and the values leave it), if every
    /// low half fits beside a slot number.
    fn wide_form(&self, widths: Widths) -> Option<WordForm> {
        let capacity = self.groups.len() + 1;
        let exact = WordForm::for_capacity(WIDE_WORD_BITS, capacity);
        let roomy = WordForm::for_capacity(WIDE_WORD_BITS, 2 * capacity);
        match widths == Widths::Wide && roomy.fits(self.widest) {
            true => Some(roomy),
            false => exact.fits(self.widest).then_some(exact),
        }
    }

    /// One slot per group, base 0.
    fn wide_slots(self) -> Vec<SlotLayout> {
        let slots = self.groups.into_iter();
        slots.map(|(high, members)| (high, 0, members)).collect()
    }

    /// Narrow words' form and slots, if the payloads fit them: each
    /// group's low halves cut, in ascending order, into runs that each fit
    /// the value bits above their first (a group's payloads that lie far
    /// apart, as a log segment's do, take a slot per run), with as many
    /// slot bits as the runs need. Sorts each group's payloads by low half
    /// (words are placed by position, so the wide layout does not mind).
    fn narrow_slots(&mut self) -> Option<(WordForm, Vec<SlotLayout>)> {
        for (_, members) in &mut self.groups {
            members.sort_unstable();
        }
        let mut capacity = self.groups.len() + 1;
        loop {
            let form = WordForm::for_capacity(NARROW_WORD_BITS, capacity);
            let slots = narrow_runs(&self.groups, form);
            if slots.len() > MAX_GROUPS {
                return None;
            }
            if slots.len() < form.slot_capacity() {
                return Some((form, slots));
            }
            capacity = slots.len() + 1;
        }
    }
}

/// The slots of `groups` (each group's members sorted) in narrow words of
/// `form`: a slot per run of a group's members that fit the value bits
/// above the run's first (tombstone bit cleared).
fn narrow_runs(groups: &[(u32, Vec<(u32, u32)>)], form: WordForm) -> Vec<SlotLayout> {
    let mut slots: Vec<SlotLayout> = Vec::new();
    for (high, members) in groups {
        let mut base = None;
        for &(low, at) in members {
            match base {
                Some(b) if form.fits(low - b) => {}
                _ => {
                    base = Some(low & !1);
                    slots.push((*high, low & !1, Vec::new()));
                }
            }
            slots.last_mut().expect("a slot per run").2.push((low, at));
        }
    }
    slots
}

/// The word for `payload` in a table of `slots` slots whose first `used`
/// hold `group(slot)` (high half and base), if a slot of its group holds
/// its value within `form`'s value bits, or else slot `used` can take its
/// group (with the payload's own base if narrow), which `take(slot,
/// group)` then fills.
fn encode_word(
    payload: u64,
    form: WordForm,
    used: usize,
    slots: usize,
    group: impl Fn(usize) -> (u32, u32),
    take: impl FnOnce(usize, (u32, u32)),
) -> Option<u32> {
    if let Some((slot, value)) = slot_holding(payload, form, used, &group) {
        return Some(form.word(slot, value));
    }
    let (high, low) = ((payload >> 32) as u32, rotated_low(payload));
    let base = if form.based() { low & !1 } else { 0 };
    if used == slots || !form.fits(low - base) {
        return None;
    }
    take(used, (high, base));
    Some(form.word(used, low - base))
}

/// The first of the `used` slots (`group(slot)`: high half and base) that
/// holds `payload` within `form`'s value bits, and its value there.
fn slot_holding(
    payload: u64,
    form: WordForm,
    used: usize,
    group: impl Fn(usize) -> (u32, u32),
) -> Option<(usize, u32)> {
    let (high, low) = ((payload >> 32) as u32, rotated_low(payload));
    (0..used).find_map(|s| {
        let (h, base) = group(s);
        let value = low
            .checked_sub(base)
            .filter(|&v| h == high && form.fits(v))?;
        Some((s, value))
    })
}

/// A payload's low half, its top bit moved to bit 0.
fn rotated_low(payload: u64) -> u32 {
    (payload as u32).rotate_left(1)
}

/// A leaf of packed entries (see the module docs). Immutable once
/// published but for payloads stored in place ([`Self::store_payload`]).
#[derive(Debug)]
pub(crate) struct PackedLeaf {
    pub(super) proj: Projection,
    /// Predicts a model key's window from the floors.
    model: LinearModel,
    /// Floors, places, group table, words, hints and marks, in one block.
    arrays: PackedArrays,
    groups: Groups,
}

impl PackedLeaf {
    /// The entries of `data` packed, if their payloads fit words and their
    /// model keys leave few ties. Reads no key.
    pub(crate) fn from_data(data: &DataNode) -> Option<Self> {
        let (mut mks, mut payloads) = (Vec::new(), Vec::new());
        for slot in data.occupied() {
            mks.push(slot.mk);
            payloads.push(slot.payload());
        }
        Self::pack(data.proj.clone(), &mks, &payloads)
    }

    /// Packs entries in key order with their model keys under `proj`.
    /// More than [`MAX_PACKED_KEYS`] entries (a bulk load's leaf of keys
    /// its models cannot tell apart) stay a data node: a window's place
    /// holds a 24-bit position.
    pub(crate) fn pack(proj: Projection, mks: &[u64], payloads: &[u64]) -> Option<Self> {
        debug_assert_eq!(mks.len(), payloads.len());
        if mks.len() > MAX_PACKED_KEYS {
            return None;
        }
        let mut windows = Vec::with_capacity(mks.len().div_ceil(WINDOW));
        let mut hints = Vec::with_capacity(mks.len());
        push_windows(&mut windows, &mut hints, mks);
        let marks = mks.iter().map(|&mk| mark_of(mk)).collect();
        Self::assemble(
            proj,
            windows,
            (hints, marks),
            payloads,
            Widths::NarrowIfFits,
        )
    }

    /// The data node of these entries, with this leaf's projection: reads
    /// every entry's key through `resolver` (their model keys are not kept).
    pub(crate) fn unpack<R: KeyResolver>(&self, resolver: &R) -> DataNode {
        let payloads = self.payloads_in_order();
        if payloads.is_empty() {
            return DataNode::empty_with(self.proj.clone());
        }
        for &p in payloads.iter().take(crate::index::LOOKUP_BATCH) {
            resolver.prefetch(p);
        }
        let mks: Vec<u64> = payloads
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                if let Some(&ahead) = payloads.get(i + crate::index::LOOKUP_BATCH) {
                    resolver.prefetch(ahead);
                }
                self.proj.model_key(resolver.key(p))
            })
            .collect();
        DataNode::from_sorted(
            self.proj.clone(),
            &mks,
            &payloads,
            cost::slots_for(payloads.len()),
        )
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.arrays.entries()
    }

    /// Heap bytes of the leaf's arrays and prefix.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arrays.heap_bytes() + self.proj.heap_bytes()
    }

    /// The payload of entry `pos`.
    #[inline]
    pub(crate) fn payload_at(&self, pos: usize) -> u64 {
        self.decode(self.arrays.word(pos))
    }

    /// The payload a word stands for.
    #[inline]
    fn decode(&self, word: u32) -> u64 {
        let value_bits = self.groups.form.value_bits;
        let slot = (word >> value_bits) as usize;
        let value = word & ((1 << value_bits) - 1);
        let (high, base) = self.group_slot(slot);
        (u64::from(high) << 32) | u64::from(value.wrapping_add(base).rotate_right(1))
    }

    /// Group-table slot `s`: its high payload half and its base (0 for
    /// wide words).
    #[inline]
    fn group_slot(&self, s: usize) -> (u32, u32) {
        match self.groups.form.based() {
            true => {
                let pair = self.arrays.group_pair(s);
                (pair as u32, (pair >> 32) as u32)
            }
            false => (self.arrays.group(s), 0),
        }
    }

    /// Number of group-table slots, free ones included.
    fn group_slot_count(&self) -> usize {
        self.arrays.group_slots() / self.groups.form.stride()
    }

    /// All payloads in key order.
    pub(crate) fn payloads_in_order(&self) -> Vec<u64> {
        (0..self.len()).map(|p| self.payload_at(p)).collect()
    }

    /// The model key of `key` in this leaf.
    #[inline]
    pub(crate) fn model_key(&self, key: &[u8]) -> u64 {
        self.proj.model_key(key)
    }

    /// Number of windows.
    #[inline]
    fn window_count(&self) -> usize {
        self.arrays.windows()
    }

    /// Window `w`.
    #[inline]
    fn window(&self, w: usize) -> Window {
        let place = self.arrays.place(w);
        Window {
            floor: self.arrays.floor(w),
            start: place >> 8,
            shift: place as u8,
        }
    }

    /// Every window, to build a changed copy from.
    fn window_list(&self) -> Vec<Window> {
        (0..self.window_count()).map(|w| self.window(w)).collect()
    }

    /// Entries `start..end` of window `w`.
    #[inline]
    fn window_range(&self, w: usize) -> Range<usize> {
        let start = (self.arrays.place(w) >> 8) as usize;
        let end = match w + 1 < self.window_count() {
            true => (self.arrays.place(w + 1) >> 8) as usize,
            false => self.len(),
        };
        start..end
    }

    /// The hint `mk` has in window `w`, or `None` if `mk` is below the
    /// window's floor (every entry of the window is above it).
    #[inline]
    fn hint_in(&self, w: usize, mk: u64) -> Option<u8> {
        let above = mk.checked_sub(self.arrays.floor(w))?;
        Some((above >> (self.arrays.place(w) as u8)).min(255) as u8)
    }

    /// The number of windows whose floor is below `mk`, searched from the
    /// window the model predicts outwards.
    #[inline]
    fn windows_below(&self, mk: u64) -> usize {
        let arrays = &self.arrays;
        let n = arrays.windows();
        if n == 0 {
            return 0;
        }
        let guess = self.model.predict_local(mk, n);
        let mut step = 1;
        if arrays.floor(guess) < mk {
            let mut lo = guess;
            let hi = loop {
                match lo + step {
                    next if next >= n => break n,
                    next if arrays.floor(next) >= mk => break next,
                    next => lo = next,
                }
                step *= 2;
            };
            arrays.first_floor_from(lo + 1, hi, mk)
        } else {
            let mut hi = guess;
            let lo = loop {
                if step > hi {
                    break 0;
                }
                if arrays.floor(hi - step) < mk {
                    break hi - step + 1;
                }
                hi -= step;
                step *= 2;
            };
            arrays.first_floor_from(lo, hi, mk)
        }
    }

    /// Calls `visit` on each entry whose hint ties with `mk`'s, in key
    /// order, skipping the entries certainly below `mk` and stopping at the
    /// first one certainly above it. Returns that entry's position (or the
    /// leaf's length), or what `visit` broke with.
    #[inline]
    fn walk_ties<B>(
        &self,
        mk: u64,
        mut visit: impl FnMut(usize) -> ControlFlow<B>,
    ) -> Result<usize, B> {
        // Windows before the last whose floor is below `mk` hold only
        // entries below it (their model keys are at most that floor).
        let first = self.windows_below(mk);
        for w in first.saturating_sub(1)..self.window_count() {
            let range = self.window_range(w);
            let Some(hint) = self.hint_in(w, mk) else {
                return Ok(range.start);
            };
            let from = self.arrays.first_hint_from(range.start, range.end, hint);
            for pos in from..range.end {
                if self.arrays.hint(pos) != hint {
                    return Ok(pos);
                }
                if let ControlFlow::Break(b) = visit(pos) {
                    return Err(b);
                }
            }
        }
        Ok(self.len())
    }

    /// The first entry whose hint does not put it below `mk`: where a
    /// search for a key of model key `mk` starts comparing keys.
    pub(crate) fn first_not_below(&self, mk: u64) -> usize {
        match self.walk_ties(mk, ControlFlow::Break) {
            Ok(pos) | Err(pos) => pos,
        }
    }

    /// The first entry whose key is `>= key`, and whether it equals `key`.
    /// Reads the keys of the entries whose hints tie with `key`'s.
    pub(crate) fn seek_ge<R: KeyResolver>(
        &self,
        key: &[u8],
        resolver: &R,
    ) -> (Option<usize>, bool) {
        let found = self.walk_ties(self.model_key(key), |pos| {
            match resolver.key(self.payload_at(pos)).cmp(key) {
                std::cmp::Ordering::Less => ControlFlow::Continue(()),
                std::cmp::Ordering::Equal => ControlFlow::Break((pos, true)),
                std::cmp::Ordering::Greater => ControlFlow::Break((pos, false)),
            }
        });
        match found {
            Err((pos, equal)) => (Some(pos), equal),
            Ok(pos) => ((pos < self.len()).then_some(pos), false),
        }
    }

    /// The payload of `key`, confirmed with the resolver.
    pub(crate) fn get<R: KeyResolver>(&self, key: &[u8], resolver: &R) -> Option<u64> {
        match self.seek_ge(key, resolver) {
            (Some(pos), true) => Some(self.payload_at(pos)),
            _ => None,
        }
    }

    /// The payload of the only entry that can be `key`: unconfirmed when it
    /// is the only entry whose hint and mark tie with `key`'s, confirmed
    /// otherwise.
    #[inline]
    pub(crate) fn get_candidate<R: KeyResolver>(&self, key: &[u8], resolver: &R) -> Option<u64> {
        let mk = self.model_key(key);
        let mark = mark_of(mk);
        let mut only = None;
        let ties = self.walk_ties(mk, |pos| match only {
            _ if self.arrays.mark(pos) != mark => ControlFlow::Continue(()),
            Some(_) => ControlFlow::Break(()),
            None => {
                only = Some(pos);
                ControlFlow::Continue(())
            }
        });
        match ties {
            Err(()) => self.get(key, resolver),
            Ok(_) => only.map(|pos| self.payload_at(pos)),
        }
    }

    /// The entry of `key` (model key `mk`) holding `payload`, found among
    /// the ties by payload (payloads are unique among entries): reads no
    /// key.
    pub(crate) fn find_payload(&self, mk: u64, payload: u64) -> Option<usize> {
        self.walk_ties(mk, |pos| match self.payload_at(pos) == payload {
            true => ControlFlow::Break(pos),
            false => ControlFlow::Continue(()),
        })
        .err()
    }

    /// Hints the CPU to load what a lookup of `key` most likely reads: the
    /// floor and place of the window the model predicts, and the hints,
    /// marks and words about where that window starts (windows hold about
    /// the same number of entries), so that a batch of lookups overlaps
    /// its misses.
    #[inline]
    pub(crate) fn hint_lookup(&self, key: &[u8]) {
        let n = self.window_count();
        if n == 0 {
            return;
        }
        let guess = self.model.predict_local(self.model_key(key), n);
        let entry = (guess * self.len() / n).min(self.len().saturating_sub(1));
        self.arrays.prefetch_window(guess);
        self.arrays.prefetch_entry(entry);
    }

    /// Hints the CPU to load the hint, mark and word of the entry where
    /// `key`'s ties start, found from the floors, places and hints
    /// [`Self::hint_lookup`] hinted.
    #[inline]
    pub(crate) fn hint_entry(&self, key: &[u8]) {
        let mk = self.model_key(key);
        let w = self.windows_below(mk).saturating_sub(1);
        if w >= self.window_count() {
            return;
        }
        let range = self.window_range(w);
        let hint = self.hint_in(w, mk).unwrap_or(0);
        let pos = self.arrays.first_hint_from(range.start, range.end, hint);
        if pos < self.len() {
            self.arrays.prefetch_entry(pos);
        }
    }

    /// Stores `payload` into entry `pos` in place if it fits a word (its
    /// group, if new, taking the table's free slot, published before the
    /// word: a reader that sees the word sees the group); returns whether
    /// it did. Writer only.
    pub(crate) fn store_payload(&self, pos: usize, payload: u64) -> bool {
        let arrays = &self.arrays;
        let word = encode_word(
            payload,
            self.groups.form,
            self.groups.used.load(Ordering::Relaxed) as usize,
            self.group_slot_count(),
            |s| self.group_slot(s),
            |slot, (high, base)| {
                match self.groups.form.based() {
                    true => {
                        arrays.store_group_pair(slot, (u64::from(base) << 32) | u64::from(high))
                    }
                    false => arrays.store_group(slot, high),
                }
                self.groups.used.store(slot as u32 + 1, Ordering::Release);
            },
        );
        match word {
            Some(word) => {
                arrays.store_word(pos, word);
                true
            }
            None => false,
        }
    }

    /// A copy with entry `pos`'s payload replaced by `payload` and a group
    /// table to hold it, if the payloads still fit words.
    pub(crate) fn with_payload(&self, pos: usize, payload: u64) -> Option<Self> {
        let windows = self.window_list();
        if let Some((groups, word)) = GroupDraft::of_leaf_taking(self, payload) {
            return Some(self.edited(&windows, groups, EntryEdit::Word(pos, word)));
        }
        let entries = (self.arrays.hints(), self.arrays.marks());
        let mut payloads = self.payloads_in_order();
        payloads[pos] = payload;
        Self::assemble(self.proj.clone(), windows, entries, &payloads, Widths::Wide)
    }

    /// This leaf with its words encoded anew as an open encodes them
    /// (narrow if the payloads fit) and its group table holding only the
    /// groups its entries name, or `None` if that would not be smaller.
    /// Compaction's repointing widens a leaf whose new payload fits no word
    /// and leaves the slots of the runs it retired; a quiet index gets the
    /// bytes back here. Hints, marks and windows stay as they are: no key
    /// is read.
    pub(crate) fn renarrowed(&self) -> Option<Self> {
        let payloads = self.payloads_in_order();
        let (groups, words) = GroupDraft::encoding(&payloads, Widths::NarrowIfFits)?;
        let narrower = groups.form.word_bits < self.groups.form.word_bits;
        let fewer_slots = groups.slots() < self.group_slot_count();
        if !narrower && !fewer_slots {
            return None;
        }
        let entries = (self.arrays.hints(), self.arrays.marks());
        let windows = self.window_list();
        Some(Self::with_parts(
            self.proj.clone(),
            &windows,
            entries,
            &words,
            groups,
        ))
    }

    /// A copy with a new entry for `key` (model key from its bytes) and
    /// `payload` at position `pos` (where [`Self::seek_ge`] found the first
    /// key above it), or `None` if it does not fit (the leaf is full, the
    /// payloads do not fit words, or keys tie past what a packed leaf
    /// takes). The new entry's hint comes from its own model key in the
    /// window that takes it; a window grown crowded (twice [`WINDOW`]
    /// entries, or a run of ties) is rebuilt from its entries' keys, read
    /// through `resolver`, and no other key is read. An entry past the end
    /// of a window whose hints it would outrun starts a window of its own
    /// (appends read no key).
    pub(crate) fn with_insert<R: KeyResolver>(
        &self,
        key: &[u8],
        pos: usize,
        payload: u64,
        resolver: &R,
    ) -> Option<Self> {
        if self.len() >= MAX_PACKED_KEYS {
            return None;
        }
        let mk = self.model_key(key);
        let mut windows = self.window_list();
        let (w, hint) = match self.window_taking(&windows, pos, mk) {
            Some((w, hint)) => {
                windows[w + 1..].iter_mut().for_each(|x| x.start += 1);
                (w, hint)
            }
            None => {
                // A window of its own, after those ending at `pos`.
                let at = windows.partition_point(|x| (x.start as usize) < pos);
                let shift = windows.get(at.saturating_sub(1)).map_or(0, |x| x.shift);
                windows[at..].iter_mut().for_each(|x| x.start += 1);
                let start = pos as u32;
                windows.insert(
                    at,
                    Window {
                        floor: mk,
                        start,
                        shift,
                    },
                );
                (at, 0)
            }
        };
        let leaf = match GroupDraft::of_leaf_taking(self, payload) {
            // The words as they are, the new one among them.
            Some((groups, word)) => {
                let mark = mark_of(mk);
                let edit = EntryEdit::Insert {
                    pos,
                    word,
                    hint,
                    mark,
                };
                self.edited(&windows, groups, edit)
            }
            // The group table is out of slot numbers: every word anew.
            None => {
                let (mut hints, mut marks) = (self.arrays.hints(), self.arrays.marks());
                hints.insert(pos, hint);
                marks.insert(pos, mark_of(mk));
                let mut payloads = self.payloads_in_order();
                payloads.insert(pos, payload);
                let widths = Widths::Wide;
                Self::assemble(
                    self.proj.clone(),
                    windows,
                    (hints, marks),
                    &payloads,
                    widths,
                )?
            }
        };
        Some(match leaf.is_crowded(w) {
            true => leaf.rewindowed(w, (pos, mk), resolver),
            false => leaf,
        })
    }

    /// The window (of this leaf's `windows`) that takes a new entry of
    /// model key `mk` at `pos`, and the entry's hint there; `None` for a
    /// window of its own (before every window, in an empty leaf, or past
    /// the end of a window where its hint would be clamped or tie with the
    /// window's last).
    fn window_taking(&self, windows: &[Window], pos: usize, mk: u64) -> Option<(usize, u8)> {
        let w = windows
            .partition_point(|x| x.start as usize <= pos)
            .checked_sub(1)?;
        let range = self.window_range(w);
        // Entries before `pos` are below the key: `mk` is at least their
        // model keys, hence at least the floor of a window that holds one.
        // At a window's first entry it may be below that floor: the entry
        // then ends the previous window.
        let (w, range) = match mk < windows[w].floor {
            true => (w.checked_sub(1)?, self.window_range(w - 1)),
            false => (w, range),
        };
        let hint = self.hint_in(w, mk)?;
        let at_end = pos == range.end;
        let outrun = hint == u8::MAX || range.is_empty() || self.arrays.hint(range.end - 1) == hint;
        (!(at_end && outrun)).then_some((w, hint))
    }

    /// Whether window `w` has grown past twice [`WINDOW`] entries or a run
    /// of ties longer than [`MAX_TIES`].
    fn is_crowded(&self, w: usize) -> bool {
        let range = self.window_range(w);
        let hints: Vec<u8> = range.clone().map(|i| self.arrays.hint(i)).collect();
        range.len() > 2 * WINDOW || longest_tie(&hints) > MAX_TIES
    }

    /// This leaf with window `w` split into windows of [`WINDOW`] entries
    /// with fresh floors and shifts, from its entries' keys (but for the
    /// entry `known.0`, whose model key `known.1` is given: a new entry's
    /// record need not be resolvable yet). The words stay as they are.
    fn rewindowed<R: KeyResolver>(&self, w: usize, known: (usize, u64), resolver: &R) -> Self {
        let range = self.window_range(w);
        let mks: Vec<u64> = range
            .clone()
            .map(|pos| match pos == known.0 {
                true => known.1,
                false => self.model_key(resolver.key(self.payload_at(pos))),
            })
            .collect();
        let all = self.window_list();
        let all_hints = self.arrays.hints();
        let mut windows = all[..w].to_vec();
        let mut hints = all_hints[..range.start].to_vec();
        push_windows(&mut windows, &mut hints, &mks);
        windows.extend_from_slice(&all[w + 1..]);
        hints.extend_from_slice(&all_hints[range.end..]);
        let groups = GroupDraft::of_leaf(self, self.group_slot_count());
        let entries = (hints, self.arrays.marks());
        Self::with_parts(
            self.proj.clone(),
            &windows,
            entries,
            &self.arrays.words(),
            groups,
        )
    }

    /// A leaf of these parts, its words encoded anew in `widths` (`None`
    /// if the payloads do not fit).
    fn assemble(
        proj: Projection,
        windows: Vec<Window>,
        entries: (Vec<u8>, Vec<u8>),
        payloads: &[u64],
        widths: Widths,
    ) -> Option<Self> {
        let (groups, words) = GroupDraft::encoding(payloads, widths)?;
        Some(Self::with_parts(proj, &windows, entries, &words, groups))
    }

    /// A leaf of these parts (`entries`: each entry's hint and mark, one
    /// to a byte), with its windows' model fitted.
    fn with_parts(
        proj: Projection,
        windows: &[Window],
        (hints, marks): (Vec<u8>, Vec<u8>),
        words: &[u32],
        groups: GroupDraft,
    ) -> Self {
        let floors: Vec<u64> = windows.iter().map(|w| w.floor).collect();
        let places: Vec<u32> = windows.iter().map(Window::place).collect();
        let arrays = PackedArrays::new(Parts {
            floors: &floors,
            places: &places,
            groups: &groups.table,
            words,
            word_bits: groups.form.word_bits,
            hints: &hints,
            marks: &marks,
        });
        Self::of_arrays(proj, &floors, arrays, &groups)
    }

    /// A copy of this leaf with `windows`, `groups` and its entries changed
    /// by `edit`, their cells copied as they are (see
    /// [`PackedArrays::edited`]).
    fn edited(&self, windows: &[Window], groups: GroupDraft, edit: EntryEdit) -> Self {
        let floors: Vec<u64> = windows.iter().map(|w| w.floor).collect();
        let places: Vec<u32> = windows.iter().map(Window::place).collect();
        let frame = Frame {
            floors: &floors,
            places: &places,
            groups: &groups.table,
        };
        let arrays = self.arrays.edited(frame, edit);
        Self::of_arrays(self.proj.clone(), &floors, arrays, &groups)
    }

    /// A leaf of `arrays` (whose floors are `floors`), with its windows'
    /// model fitted.
    fn of_arrays(
        proj: Projection,
        floors: &[u64],
        arrays: PackedArrays,
        groups: &GroupDraft,
    ) -> Self {
        PackedLeaf {
            proj,
            model: LinearModel::fit(floors, floors.len() as f64),
            arrays,
            groups: Groups {
                used: AtomicU32::new(groups.used as u32),
                form: groups.form,
            },
        }
    }

    /// A copy without entry `pos`. Floors stay (they remain lower bounds);
    /// a window left empty is dropped.
    pub(crate) fn with_remove(&self, pos: usize) -> Self {
        let windows = (0..self.window_count()).filter_map(|w| {
            let range = self.window_range(w);
            if range.len() == 1 && range.start == pos {
                return None;
            }
            let window = self.window(w);
            let start = window.start - u32::from(window.start as usize > pos);
            Some(Window { start, ..window })
        });
        let windows: Vec<Window> = windows.collect();
        let groups = GroupDraft::of_leaf(self, self.group_slot_count());
        self.edited(&windows, groups, EntryEdit::Remove(pos))
    }
}

/// Appends windows of up to [`WINDOW`] entries over the model keys `mks`
/// (sorted), after `hints.len()` entries already placed, and their hints.
fn push_windows(windows: &mut Vec<Window>, hints: &mut Vec<u8>, mks: &[u64]) {
    for chunk in mks.chunks(WINDOW) {
        push_window(windows, hints, chunk);
    }
}
/// Appends a window over the model keys `mks` (sorted, not empty), or two
/// over its halves, recursively, where one would hold a run of more than
/// [`MAX_TIES`] ties (clustered keys beside far ones: one shift cannot
/// tell both apart).
fn push_window(windows: &mut Vec<Window>, hints: &mut Vec<u8>, mks: &[u64]) {
    let floor = mks[0];
    let span = mks[mks.len() - 1] - floor;
    let shift = (u64::BITS - span.leading_zeros()).saturating_sub(8) as u8;
    let start = hints.len();
    hints.extend(mks.iter().map(|&mk| ((mk - floor) >> shift) as u8));
    if mks.len() > MAX_TIES && longest_tie(&hints[start..]) > MAX_TIES {
        hints.truncate(start);
        let (low, high) = mks.split_at(mks.len() / 2);
        push_window(windows, hints, low);
        return push_window(windows, hints, high);
    }
    windows.push(Window {
        floor,
        start: start as u32,
        shift,
    });
}

/// The mark of model key `mk`: the top [`MARK_BITS`] bits of a
/// multiplicative hash, which differ for neighbouring model keys 3 times
/// in 4.
#[inline]
fn mark_of(mk: u64) -> u8 {
    (mk.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MARK_BITS)) as u8
}

/// The longest run of equal values in `hints`.
fn longest_tie(hints: &[u8]) -> usize {
    hints
        .chunk_by(|a, b| a == b)
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::data_node::tests::{Keys, node_of};

    /// `n` distinct 8-byte keys spread over the key space, sorted.
    fn spread_keys(n: u64) -> Keys {
        Keys(
            (0..n)
                .map(|i| (i * 0x0123_4567_89ab).to_be_bytes().to_vec())
                .collect(),
        )
    }

    #[test]
    fn packed_lookups_find_what_the_data_node_finds() {
        let keys = spread_keys(300);
        let data = node_of(&keys);
        let packed = PackedLeaf::from_data(&data).expect("small payloads pack");
        assert_eq!(packed.len(), 300);
        assert_eq!(packed.payloads_in_order(), data.payloads_in_order());
        for (i, key) in keys.0.iter().enumerate() {
            assert_eq!(packed.get(key, &keys), Some(i as u64));
            assert_eq!(packed.get_candidate(key, &keys), Some(i as u64));
            let mut above = key.clone();
            above.push(0);
            assert_eq!(packed.get(&above, &keys), None);
            let (ge, equal) = packed.seek_ge(&above, &keys);
            assert_eq!((ge, equal), ((i + 1 < 300).then_some(i + 1), false));
        }
        assert_eq!(packed.seek_ge(&[], &keys), (Some(0), false));
        assert_eq!(packed.get(&[0xff; 9], &keys), None);
    }

    #[test]
    fn marks_tell_a_key_from_its_neighbour_without_a_record() {
        let keys = spread_keys(1000);
        let packed = PackedLeaf::pack(
            Projection::default(),
            &keys.0.iter().map(|k| load_mk(k)).collect::<Vec<_>>(),
            &(0..1000).collect::<Vec<_>>(),
        )
        .expect("small payloads pack");
        let counting = Counting(&keys, std::cell::Cell::new(0));
        let mut candidates = 0;
        for key in &keys.0 {
            // The neighbour's hint ties with the key's: only the mark tells.
            let neighbour = (load_mk(key) + 1).to_be_bytes();
            candidates += packed.get_candidate(&neighbour, &counting).is_some() as usize;
        }
        assert!(
            candidates < 1000 / 3,
            "{candidates} neighbours had a candidate"
        );
        assert_eq!(counting.1.get(), 0, "no key read");
        // After inserts and a removal, marks still belong to their entries.
        let mut leaf = packed.with_remove(500);
        let extra = (0..100).map(|i| {
            (load_mk(&keys.0[i * 7]) + 12_345_678)
                .to_be_bytes()
                .to_vec()
        });
        let all = Keys(keys.0.iter().cloned().chain(extra).collect());
        for n in 0..100 {
            let key = &all.0[1000 + n];
            let (pos, _) = leaf.seek_ge(key, &all);
            let pos = pos.unwrap_or(leaf.len());
            leaf = leaf
                .with_insert(key, pos, (1000 + n) as u64, &all)
                .expect("fits");
        }
        for (i, key) in all.0.iter().enumerate().filter(|(i, _)| *i != 500) {
            assert_eq!(leaf.get_candidate(key, &all), Some(i as u64));
        }
    }

    fn load_mk(key: &[u8]) -> u64 {
        Projection::default().model_key(key)
    }

    /// Payloads are stored in place while their group fits the table, in a
    /// copy with a bigger table once it does not, and not at all when
    /// their low half is too wide.
    #[test]
    fn payloads_are_stored_in_place_then_in_a_copy() {
        let keys = spread_keys(64);
        let packed = PackedLeaf::from_data(&node_of(&keys)).unwrap();
        assert!(packed.store_payload(3, (7 << 32) | 800));
        assert_eq!(packed.payload_at(3), (7 << 32) | 800);
        assert!(
            !packed.store_payload(4, (8 << 32) | 808),
            "the table is full"
        );
        let copy = packed.with_payload(4, (8 << 32) | 808).unwrap();
        assert_eq!(copy.payload_at(4), (8 << 32) | 808);
        assert_eq!(copy.payload_at(3), (7 << 32) | 800);
        assert_eq!(copy.payload_at(5), 5);
        let tombstone = (1 << 31) | 16;
        assert!(copy.store_payload(6, tombstone) && copy.payload_at(6) == tombstone);
        assert!(copy.with_payload(7, u64::from(u32::MAX)).is_none());
    }

    /// A leaf whose payloads lie near each other within each group (the
    /// offsets of a key-ordered run's records) packs in narrow words, each
    /// its offset from its group's base; a payload that does not fit
    /// beside the bases goes to a copy in wide words.
    #[test]
    fn narrow_words_hold_offsets_from_their_groups_base() {
        let keys = spread_keys(200);
        let mks: Vec<u64> = keys.0.iter().map(|k| load_mk(k)).collect();
        let groups = [(5u64, 100_000_000u64), (9, 7), (12, 3_000_000)];
        let payloads: Vec<u64> = (0..200u64)
            .map(|i| {
                let (segment, base) = groups[(i % 3) as usize];
                (segment << 32) | (base + i * 140)
            })
            .collect();
        let packed = PackedLeaf::pack(Projection::default(), &mks, &payloads).unwrap();
        assert_eq!(packed.arrays.word_bits(), NARROW_WORD_BITS);
        assert_eq!(packed.groups.form.value_bits, NARROW_WORD_BITS - 2);
        assert_eq!(packed.payloads_in_order(), payloads);
        let resolver = Mapped(&keys, &payloads);
        for (key, &payload) in keys.0.iter().zip(&payloads) {
            assert_eq!(packed.get(key, &resolver), Some(payload));
        }
        // In place: the same group past its last offset, a tombstone, and
        // a new group taking the free slot with its own base.
        let near = (9 << 32) | (7 + 200 * 140);
        assert!(packed.store_payload(1, near));
        let tombstone = (5 << 32) | (1 << 31) | 100_000_000;
        assert!(packed.store_payload(2, tombstone));
        assert!(packed.store_payload(3, (77 << 32) | 5_000_000));
        assert!(packed.store_payload(4, (77 << 32) | 5_000_800));
        let stored: Vec<u64> = (1..=4).map(|i| packed.payload_at(i)).collect();
        let new_group = [(77 << 32) | 5_000_000, (77 << 32) | 5_000_800];
        assert_eq!(stored, [near, tombstone, new_group[0], new_group[1]]);
        // Below a group's base, or too far above it: not in place.
        assert!(!packed.store_payload(5, (77 << 32) | 4_999_999));
        assert!(!packed.store_payload(5, (9 << 32) | (7 + (1 << 20))));
        // The copy that takes it has wide words, with room for twice the
        // groups, which take what follows in place.
        let mut want = packed.payloads_in_order();
        want[5] = (77 << 32) | 4_999_999;
        let copy = packed.with_payload(5, want[5]).unwrap();
        assert_eq!(copy.arrays.word_bits(), WIDE_WORD_BITS);
        assert_eq!(copy.groups.form.slot_capacity(), 16);
        assert_eq!(copy.payloads_in_order(), want);
        let far = (9 << 32) | (1 << 26);
        assert!(copy.store_payload(6, far));
        want[6] = far;
        assert_eq!(copy.payloads_in_order(), want);
        // So does a new key's copy when its payload fits no narrow word.
        let mut above = keys.0[199].clone();
        above.push(0);
        let mut payloads = payloads.clone();
        payloads.push(far + 1);
        let mut keys = Keys(keys.0.clone());
        keys.0.push(above.clone());
        let grown = packed
            .with_insert(&above, 200, far + 1, &Mapped(&keys, &payloads))
            .unwrap();
        assert_eq!(grown.arrays.word_bits(), WIDE_WORD_BITS);
        assert_eq!(grown.payload_at(200), far + 1);
        assert_eq!(
            grown.payloads_in_order()[..5],
            packed.payloads_in_order()[..5]
        );
    }

    /// A leaf whose keys were overwritten (their payloads in a log segment,
    /// far apart) goes wide; compaction then repoints every entry into a
    /// run, and the leaf stays wide with a slot for each segment its
    /// entries left. Re-narrowed when quiet it holds the same entries in
    /// narrow words and a table of the runs in use, at the size a leaf
    /// packed from them has.
    #[test]
    fn a_leaf_widened_by_repointing_is_narrowed_again() {
        let keys = spread_keys(200);
        let mks: Vec<u64> = keys.0.iter().map(|k| load_mk(k)).collect();
        let old: Vec<u64> = (0..200u64).map(|i| (5 << 32) | (1000 + i * 140)).collect();
        let mut leaf = PackedLeaf::pack(Projection::default(), &mks, &old).unwrap();
        assert_eq!(leaf.arrays.word_bits(), NARROW_WORD_BITS);
        assert!(leaf.renarrowed().is_none(), "nothing to gain when packed");
        let repoint =
            |leaf: PackedLeaf, pos: usize, payload: u64| match leaf.store_payload(pos, payload) {
                true => leaf,
                false => leaf.with_payload(pos, payload).unwrap(),
            };
        // Overwrites of every other key, in the log segment 9.
        for pos in (0..200).step_by(2) {
            leaf = repoint(leaf, pos, (9 << 32) | (pos as u64) << 18);
        }
        // Compaction moves every entry into run 6.
        let new: Vec<u64> = (0..200u64)
            .map(|i| (6 << 32) | (300_000_000 + i * 140))
            .collect();
        for (pos, &payload) in new.iter().enumerate() {
            leaf = repoint(leaf, pos, payload);
        }
        assert_eq!(leaf.payloads_in_order(), new);
        assert_eq!(leaf.arrays.word_bits(), WIDE_WORD_BITS);
        let narrowed = leaf.renarrowed().expect("narrower");
        assert_eq!(narrowed.arrays.word_bits(), NARROW_WORD_BITS);
        assert_eq!(narrowed.payloads_in_order(), new);
        assert!(narrowed.heap_bytes() < leaf.heap_bytes());
        let fresh = PackedLeaf::pack(Projection::default(), &mks, &new).unwrap();
        assert_eq!(narrowed.heap_bytes(), fresh.heap_bytes());
        let resolver = Mapped(&keys, &new);
        for (key, &payload) in keys.0.iter().zip(&new) {
            assert_eq!(narrowed.get(key, &resolver), Some(payload));
            assert_eq!(narrowed.get_candidate(key, &resolver), Some(payload));
        }
        assert!(narrowed.renarrowed().is_none());
    }

    /// A group whose payloads lie far apart (a log segment's offsets)
    /// takes a slot per run of close ones, and the leaf stays narrow; runs
    /// that need more slot bits get them.
    #[test]
    fn far_apart_payloads_of_a_group_take_a_slot_per_run() {
        let keys = spread_keys(300);
        let mks: Vec<u64> = keys.0.iter().map(|k| load_mk(k)).collect();
        let payloads: Vec<u64> = (0..300u64)
            .map(|i| match i % 10 {
                // Four runs of the log segment 40, 2^24 bytes apart.
                0 => (40 << 32) | ((i / 10 % 4) << 24) | i,
                _ => ((i % 3) << 32) | (1_000_000 + i * 100),
            })
            .collect();
        let packed = PackedLeaf::pack(Projection::default(), &mks, &payloads).unwrap();
        assert_eq!(packed.arrays.word_bits(), NARROW_WORD_BITS);
        assert_eq!(packed.groups.used.load(Ordering::Relaxed), 3 + 4);
        assert_eq!(packed.groups.form.value_bits, NARROW_WORD_BITS - 3);
        assert_eq!(packed.payloads_in_order(), payloads);
        // A store lands in whichever of its segment's slots holds it.
        let near_third_run = (40 << 32) | (2 << 24) | 77;
        assert!(packed.store_payload(1, near_third_run));
        assert_eq!(packed.payload_at(1), near_third_run);
        // Runs past the slot bits: one more bit, fewer value bits.
        let spread: Vec<u64> = (0..300u64)
            .map(|i| (40 << 32) | ((i % 9) << 24) | i)
            .collect();
        let packed = PackedLeaf::pack(Projection::default(), &mks, &spread).unwrap();
        assert_eq!(packed.arrays.word_bits(), NARROW_WORD_BITS);
        assert_eq!(packed.groups.used.load(Ordering::Relaxed), 9);
        assert_eq!(packed.groups.form.value_bits, NARROW_WORD_BITS - 4);
        assert_eq!(packed.payloads_in_order(), spread);
    }

    /// Resolves payloads to the key at their position in a list.
    struct Mapped<'k>(&'k Keys, &'k [u64]);

    impl KeyResolver for Mapped<'_> {
        fn key(&self, payload: u64) -> &[u8] {
            let at = self
                .1
                .iter()
                .position(|&p| p == payload)
                .expect("a known payload");
            &self.0.0[at]
        }
    }

    #[test]
    fn removals_keep_lookups_and_drop_empty_windows() {
        let keys = spread_keys(100);
        let mut packed = PackedLeaf::from_data(&node_of(&keys)).unwrap();
        let removed: Vec<usize> = (0..100).filter(|i| i % 3 != 1 || *i < 40).collect();
        for &i in removed.iter().rev() {
            let pos = packed.seek_ge(&keys.0[i], &keys).0.unwrap();
            packed = packed.with_remove(pos);
        }
        assert!(packed.window_count() < 100usize.div_ceil(WINDOW));
        for (i, key) in keys.0.iter().enumerate() {
            let want = (!removed.contains(&i)).then_some(i as u64);
            assert_eq!(packed.get(key, &keys), want, "{i}");
            assert_eq!(
                packed.get_candidate(key, &keys).filter(|&p| p == i as u64),
                want
            );
        }
        let unpacked = packed.unpack(&keys);
        assert_eq!(unpacked.payloads_in_order(), packed.payloads_in_order());
    }

    /// A resolver over `keys` that counts its reads.
    struct Counting<'k>(&'k Keys, std::cell::Cell<usize>);

    impl KeyResolver for Counting<'_> {
        fn key(&self, payload: u64) -> &[u8] {
            self.1.set(self.1.get() + 1);
            self.0.key(payload)
        }
    }

    /// Inserts `order` (indices into `keys`, payload = index) one by one
    /// into `leaf`, then checks every key of `keys` that is in `present`
    /// or `order` is found and no other; returns the leaf.
    fn insert_all(mut leaf: PackedLeaf, keys: &Keys, order: &[usize]) -> PackedLeaf {
        for &i in order {
            let (pos, equal) = leaf.seek_ge(&keys.0[i], keys);
            assert!(!equal, "{i} is new");
            let pos = pos.unwrap_or(leaf.len());
            leaf = leaf
                .with_insert(&keys.0[i], pos, i as u64, keys)
                .expect("fits");
        }
        leaf
    }

    /// Appends past the last key start windows of their own and read no
    /// key; inserts in the middle and before the first key keep every
    /// lookup right, and a crowded window is rebuilt from its keys.
    #[test]
    fn inserts_keep_lookups_and_appends_read_no_key() {
        let keys = spread_keys(600);
        let base: Vec<u64> = (200..400).collect();
        let base_keys = Keys(keys.0.clone());
        let mks: Vec<u64> = base
            .iter()
            .map(|&i| Projection::default().model_key(&keys.0[i as usize]))
            .collect();
        let leaf = PackedLeaf::pack(Projection::default(), &mks, &base).unwrap();
        let counting = Counting(&base_keys, std::cell::Cell::new(0));
        let mut appended = leaf;
        for i in 400..600 {
            let key = &keys.0[i];
            appended = appended
                .with_insert(key, appended.len(), i as u64, &counting)
                .unwrap();
        }
        assert_eq!(counting.1.get(), 0, "appends read no key");
        let middle: Vec<usize> = (0..200).rev().collect();
        let mut leaf = insert_all(appended, &keys, &middle);
        assert_eq!(leaf.len(), 600);
        for (i, key) in keys.0.iter().enumerate() {
            assert_eq!(leaf.get(key, &keys), Some(i as u64), "{i}");
            assert_eq!(leaf.get_candidate(key, &keys), Some(i as u64), "{i}");
        }
        // Dense inserts between neighbours crowd a window until it is rebuilt.
        let between: Vec<Vec<u8>> = (1..=100u64)
            .map(|j| (300 * 0x0123_4567_89ab + j).to_be_bytes().to_vec())
            .collect();
        let mut all = keys.0.clone();
        all.extend(between.iter().cloned());
        let all = Keys(all);
        for j in 0..100 {
            let key = &all.0[600 + j];
            let (pos, equal) = leaf.seek_ge(key, &all);
            assert!(!equal);
            leaf = leaf
                .with_insert(key, pos.unwrap(), 600 + j as u64, &all)
                .unwrap();
        }
        for (i, key) in all.0.iter().enumerate() {
            assert_eq!(leaf.get(key, &all), Some(i as u64), "{i}");
        }
        assert!(leaf.window_count() > 700 / (2 * WINDOW));
        assert_eq!(leaf.unpack(&all).len(), 700);
    }

    /// Keys equal in their first eight bytes after the prefix all get one
    /// hint: they go to windows of at most [`MAX_TIES`] and are told apart
    /// by their keys. Payloads too wide for words stay in a data node.
    #[test]
    fn ties_pack_in_small_windows_and_wide_payloads_stay_dense() {
        let middle = (0..20u8).map(|i| [b"mmmmmmmmmmmm".as_slice(), &[i]].concat());
        let tied = Keys(
            [b"a".to_vec()]
                .into_iter()
                .chain(middle)
                .chain([b"z".to_vec()])
                .collect(),
        );
        let packed = PackedLeaf::from_data(&node_of(&tied)).unwrap();
        assert!(packed.window_count() >= 3);
        for (i, key) in tied.0.iter().enumerate() {
            assert_eq!(packed.get_candidate(key, &tied), Some(i as u64));
        }
        let keys = spread_keys(200);
        let mks: Vec<u64> = keys
            .0
            .iter()
            .map(|k| Projection::default().model_key(k))
            .collect();
        // Payloads in more groups than a table takes.
        let scattered: Vec<u64> = (0..200).map(|i| i << 32).collect();
        assert!(PackedLeaf::pack(Projection::default(), &mks, &scattered).is_none());
        // One group's payloads each far from the others: more runs than
        // slots, so wide words (one slot, 31 value bits).
        let far: Vec<u64> = (0..200).map(|i| i << 22).collect();
        let packed = PackedLeaf::pack(Projection::default(), &mks, &far).unwrap();
        assert_eq!(packed.arrays.word_bits(), WIDE_WORD_BITS);
        assert_eq!(packed.payloads_in_order(), far);
        // Too wide for that: a low half of 2^31 and more beside a slot bit.
        let too_wide: Vec<u64> = (0..200).map(|i| (i << 22) | (1 << 30)).collect();
        assert!(PackedLeaf::pack(Projection::default(), &mks, &too_wide).is_none());
        let many: Vec<u64> = (0..MAX_PACKED_KEYS as u64 + 1).collect();
        assert!(PackedLeaf::pack(Projection::default(), &many, &many).is_none());
    }
}

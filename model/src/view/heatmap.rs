//! The sub-second heatmap (FlameScope's view) as pure decisions: a grid of seconds (columns)
//! × sub-second slots (rows, the second's first slot at the top, so each column reads
//! downwards in time), the colour of a count, the legend, which cell is under the pointer, the
//! millisecond interval two cells span and where its selection is drawn.
//!
//! The canvas paints the grid as one image of `seconds × slots` pixels ([`fill_rgba`]) scaled
//! to the canvas without smoothing: one `putImageData` and one `drawImage`, whatever the grid's
//! size, instead of a rectangle per cell (an hour at 50 slots is 180,000 cells).

use crate::view::color::Rgb;

/// Most slots a second may be cut into (a slot is then one millisecond).
pub const MAX_SLOTS_PER_SECOND: u32 = 1000;

/// Why an answer cannot be drawn as a heatmap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeatmapError {
    /// `slots_per_second` outside 1..=1000.
    #[error("slots_per_second {0} is outside 1-1000")]
    Slots(u32),
    /// A column with another number of slots than the answer says.
    #[error("second {column} has {found} slots, not {slots}")]
    Column {
        /// The column (seconds after `time_start`).
        column: usize,
        /// Its slot count.
        found: usize,
        /// The answer's `slots_per_second`.
        slots: u32,
    },
}

/// Counts per (second, slot).
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    time_start: i64,
    slots: u32,
    columns: usize,
    /// Column-major: `counts[column * slots + slot]`, which is also time order.
    counts: Vec<u64>,
    max: u64,
    total: u64,
}

/// One cell: a slot of a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    /// Seconds after the heatmap's first.
    pub column: usize,
    /// Slot within the second, 0 = its first.
    pub slot: u32,
}

/// A half-open interval `[start_ms, end_ms)` of Unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// First millisecond inside.
    pub start_ms: i64,
    /// First millisecond after.
    pub end_ms: i64,
}

impl Interval {
    /// Its length in milliseconds.
    pub fn len_ms(&self) -> i64 {
        self.end_ms - self.start_ms
    }
}

/// The canvas' size in CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Width of the grid.
    pub width_css: f64,
    /// Height of the grid.
    pub height_css: f64,
}

/// A rectangle in CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Heatmap {
    /// The heatmap of an answer: `values[second][slot]`, the first second at `time_start`
    /// (Unix seconds).
    pub fn new(
        time_start: i64,
        slots_per_second: u32,
        values: &[Vec<u64>],
    ) -> Result<Heatmap, HeatmapError> {
        if !(1..=MAX_SLOTS_PER_SECOND).contains(&slots_per_second) {
            return Err(HeatmapError::Slots(slots_per_second));
        }
        let slots = slots_per_second as usize;
        let mut counts = Vec::with_capacity(values.len() * slots);
        for (column, col) in values.iter().enumerate() {
            if col.len() != slots {
                return Err(HeatmapError::Column {
                    column,
                    found: col.len(),
                    slots: slots_per_second,
                });
            }
            counts.extend_from_slice(col);
        }
        let max = counts.iter().copied().max().unwrap_or(0);
        let total = counts.iter().fold(0u64, |s, &c| s.saturating_add(c));
        Ok(Heatmap {
            time_start,
            slots: slots_per_second,
            columns: values.len(),
            counts,
            max,
            total,
        })
    }

    /// Unix second of the first column.
    pub fn time_start(&self) -> i64 {
        self.time_start
    }

    /// Slots per second (rows).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Seconds (columns).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The largest count of a cell.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// All counts summed.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The count of `cell` (0 outside the grid).
    pub fn count(&self, cell: Cell) -> u64 {
        if cell.column >= self.columns || cell.slot >= self.slots {
            return 0;
        }
        self.counts[cell.column * self.slots as usize + cell.slot as usize]
    }

    /// First Unix millisecond of `cell`. Slots split a second at whole milliseconds
    /// (`slot × 1000 / slots`, rounded down), so cells tile the second exactly.
    pub fn cell_start_ms(&self, cell: Cell) -> i64 {
        let second = self.time_start + cell.column as i64;
        second * 1000 + i64::from(cell.slot) * 1000 / i64::from(self.slots)
    }

    /// The interval of `cell`.
    pub fn cell_interval(&self, cell: Cell) -> Interval {
        Interval {
            start_ms: self.cell_start_ms(cell),
            end_ms: self.cell_start_ms(self.next(cell)),
        }
    }

    /// The interval from the earlier of `a` and `b` to the end of the later, in time order
    /// (down each column, then to the next).
    pub fn interval(&self, a: Cell, b: Cell) -> Interval {
        let (first, last) = if a <= b { (a, b) } else { (b, a) };
        Interval {
            start_ms: self.cell_start_ms(first),
            end_ms: self.cell_start_ms(self.next(last)),
        }
    }

    /// The cells an interval covers, first and last (clamped to the grid); `None` when it
    /// misses the grid.
    pub fn cells_of(&self, iv: Interval) -> Option<(Cell, Cell)> {
        let grid_start = self.time_start * 1000;
        let grid_end = (self.time_start + self.columns as i64) * 1000;
        if self.columns == 0 || iv.end_ms <= grid_start || iv.start_ms >= grid_end {
            return None;
        }
        let first = self.cell_of_ms(iv.start_ms.max(grid_start));
        let last = self.cell_of_ms((iv.end_ms - 1).min(grid_end - 1));
        Some((first, last))
    }

    /// The cell holding Unix millisecond `ms` (inside the grid).
    fn cell_of_ms(&self, ms: i64) -> Cell {
        let rel = ms - self.time_start * 1000;
        let column = rel.div_euclid(1000);
        let in_second = rel.rem_euclid(1000);
        // The last slot whose start is at or before `in_second`.
        let slot = ((in_second + 1) * i64::from(self.slots) - 1) / 1000;
        Cell {
            column: column.max(0) as usize,
            slot: slot.clamp(0, i64::from(self.slots) - 1) as u32,
        }
    }

    /// The cell after `cell` in time order (one past the grid at its end).
    fn next(&self, cell: Cell) -> Cell {
        if cell.slot + 1 < self.slots {
            Cell {
                slot: cell.slot + 1,
                ..cell
            }
        } else {
            Cell {
                column: cell.column + 1,
                slot: 0,
            }
        }
    }

    /// The cell under `(x, y)` (CSS px in the grid), if any.
    pub fn cell_at(&self, g: &Geometry, x: f64, y: f64) -> Option<Cell> {
        if self.columns == 0 || x < 0.0 || y < 0.0 || x >= g.width_css || y >= g.height_css {
            return None;
        }
        let column = (x / g.width_css * self.columns as f64).floor() as usize;
        let slot = (y / g.height_css * f64::from(self.slots)).floor() as u32;
        Some(Cell {
            column: column.min(self.columns - 1),
            slot: slot.min(self.slots - 1),
        })
    }

    /// The cell nearest `(x, y)`, clamped into the grid (a drag that leaves the canvas keeps
    /// selecting up to its edge).
    pub fn cell_near(&self, g: &Geometry, x: f64, y: f64) -> Option<Cell> {
        let x = x.clamp(0.0, (g.width_css - 0.01).max(0.0));
        let y = y.clamp(0.0, (g.height_css - 0.01).max(0.0));
        self.cell_at(g, x, y)
    }

    /// Where the selection of `iv` is drawn: up to three rectangles (the rest of the first
    /// column, the whole columns between, the start of the last column).
    pub fn selection_areas(&self, g: &Geometry, iv: Interval) -> Vec<Area> {
        let Some((first, last)) = self.cells_of(iv) else {
            return Vec::new();
        };
        let cw = g.width_css / self.columns as f64;
        let ch = g.height_css / f64::from(self.slots);
        let x = |c: usize| c as f64 * cw;
        let y = |s: u32| f64::from(s) * ch;
        let column = |c: usize, from: u32, to: u32| Area {
            x: x(c),
            y: y(from),
            w: cw,
            h: y(to + 1) - y(from),
        };
        if first.column == last.column {
            return vec![column(first.column, first.slot, last.slot)];
        }
        let mut out = vec![column(first.column, first.slot, self.slots - 1)];
        if last.column > first.column + 1 {
            out.push(Area {
                x: x(first.column + 1),
                y: 0.0,
                w: x(last.column) - x(first.column + 1),
                h: g.height_css,
            });
        }
        out.push(column(last.column, 0, last.slot));
        out
    }
}

/// Colours of counts: a sequential ramp (ColorBrewer's OrRd on light pages; dark red to pale
/// yellow on dark ones, so more is always the more visible end), empty cells apart in a
/// neutral tone, so "no sample" never reads as "few".
#[derive(Debug, Clone, PartialEq)]
pub struct HeatScale {
    max: u64,
    empty: Rgb,
    lut: [Rgb; 256],
}

const LIGHT_STOPS: [Rgb; 4] = [
    Rgb(254, 232, 200),
    Rgb(252, 141, 89),
    Rgb(215, 48, 31),
    Rgb(127, 0, 0),
];
const DARK_STOPS: [Rgb; 4] = [
    Rgb(74, 30, 26),
    Rgb(170, 46, 30),
    Rgb(240, 128, 40),
    Rgb(255, 236, 150),
];

impl HeatScale {
    /// The scale for counts up to `max`, for a light or dark page.
    pub fn new(max: u64, dark: bool) -> HeatScale {
        let stops = if dark { DARK_STOPS } else { LIGHT_STOPS };
        let mut lut = [Rgb(0, 0, 0); 256];
        for (i, c) in lut.iter_mut().enumerate() {
            let t = i as f64 / 255.0 * (stops.len() - 1) as f64;
            let k = (t.floor() as usize).min(stops.len() - 2);
            *c = stops[k].mix(stops[k + 1], t - k as f64);
        }
        let empty = if dark {
            Rgb(34, 35, 40)
        } else {
            Rgb(241, 239, 236)
        };
        HeatScale {
            max: max.max(1),
            empty,
            lut,
        }
    }

    /// The colour of a cell holding `count`.
    pub fn color(&self, count: u64) -> Rgb {
        if count == 0 {
            return self.empty;
        }
        // The lowest count gets the ramp's first step, not the empty colour.
        let i = ((count.min(self.max) as f64 / self.max as f64) * 255.0).ceil() as usize;
        self.lut[i.clamp(1, 255)]
    }

    /// The largest count (the ramp's top).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The legend's labelled counts: 0, the top, and round steps between (at most 5 labels).
    pub fn legend_ticks(&self) -> Vec<u64> {
        let step = nice_step(self.max, 4);
        let mut ticks: Vec<u64> = (0..)
            .map(|k| k * step)
            .take_while(|&v| v < self.max)
            .collect();
        // A step that lands just short of the top would print two labels on top of each other.
        if ticks.len() > 1 && (self.max - ticks[ticks.len() - 1]) * 3 < step {
            ticks.pop();
        }
        ticks.push(self.max);
        ticks
    }
}

/// The smallest of 1, 2 or 5 × 10^k that cuts `max` into at most `parts` steps.
fn nice_step(max: u64, parts: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if s.saturating_mul(parts) >= max {
                return s;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// The grid as an RGBA image, one pixel a cell, `columns` wide and `slots` high (row-major,
/// the second's first slot on the top row), into `out` (resized).
pub fn fill_rgba(map: &Heatmap, scale: &HeatScale, out: &mut Vec<u8>) {
    let (w, h) = (map.columns, map.slots as usize);
    out.clear();
    out.resize(w * h * 4, 255);
    for (column, counts) in map.counts.chunks_exact(h.max(1)).enumerate() {
        for (slot, &count) in counts.iter().enumerate() {
            let Rgb(r, g, b) = scale.color(count);
            let at = (slot * w + column) * 4;
            out[at] = r;
            out[at + 1] = g;
            out[at + 2] = b;
        }
    }
}

#[cfg(test)]
#[path = "heatmap_tests.rs"]
mod tests;

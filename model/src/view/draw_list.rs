//! What the canvas draws, as data: filled rectangles, a run of labels and outlines — the
//! output of [`crate::view::paint`], replayed by the viewer's canvas and read by snapshot tests.

use crate::view::color::Rgb;

/// How a rectangle is filled. Colours per function and the fixed fills are resolved by the
/// canvas (which keeps them as ready-made strings); computed colours come as RGB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The colour of function `id` in the current palette.
    Function(u32),
    /// The neutral root colour.
    Root,
    /// Runs of sub-pixel frames merged into one bar.
    Merged,
    /// A colour computed for this bar (Self shading, differences).
    Rgb(Rgb),
}

/// One filled rectangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width (already reduced by the gap).
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Fill.
    pub fill: Fill,
    /// Opacity, 0..=1.
    pub alpha: f64,
}

/// What an outline marks (the canvas picks colour and dash from the theme).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A frame of the selected or table-highlighted function.
    Selected,
    /// The frame with keyboard focus (dashed).
    Focus,
    /// The bar under the pointer.
    Hover,
    /// A frame only the baseline of a diff has (dashed, muted).
    Gone,
}

/// One outline, inset so that its stroke stays inside the bar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outline {
    /// Left edge of the stroke's centre line.
    pub x: f64,
    /// Top edge of the stroke's centre line.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Stroke width.
    pub line_width: f64,
    /// What it marks.
    pub mark: Mark,
}

/// The labels of a frame as one run of text, so the canvas converts one string per frame
/// instead of one per label.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    /// Every label, concatenated.
    pub text: String,
    /// End of each label in `text`, in bytes.
    pub byte_ends: Vec<u32>,
    /// End of each label in `text`, in UTF-16 code units (what JS `substring` counts).
    pub utf16_ends: Vec<u32>,
    /// Left edge of each label's text.
    pub xs: Vec<f64>,
    /// Vertical middle of each label's text.
    pub ys: Vec<f64>,
    /// Opacity of each label.
    pub alphas: Vec<f64>,
}

impl Labels {
    /// Adds a label.
    pub fn push(&mut self, text: &str, x: f64, y: f64, alpha: f64) {
        let last = self.utf16_ends.last().copied().unwrap_or(0);
        self.text.push_str(text);
        self.byte_ends.push(self.text.len() as u32);
        self.utf16_ends
            .push(last + text.encode_utf16().count() as u32);
        self.xs.push(x);
        self.ys.push(y);
        self.alphas.push(alpha);
    }

    /// The number of labels.
    pub fn len(&self) -> usize {
        self.xs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.xs.is_empty()
    }

    /// Label `i`'s text.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.byte_ends[i - 1] };
        &self.text[start as usize..self.byte_ends[i] as usize]
    }

    /// Empties the run, keeping its allocations.
    pub fn clear(&mut self) {
        self.text.clear();
        self.byte_ends.clear();
        self.utf16_ends.clear();
        self.xs.clear();
        self.ys.clear();
        self.alphas.clear();
    }
}

/// Everything to draw for one frame, in order: rectangles, then labels, then outlines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrawList {
    /// Filled bars.
    pub rects: Vec<Rect>,
    /// Their labels.
    pub labels: Labels,
    /// Outlines on top.
    pub outlines: Vec<Outline>,
}

impl DrawList {
    /// Empties the list, keeping its allocations for the next frame.
    pub fn clear(&mut self) {
        self.rects.clear();
        self.labels.clear();
        self.outlines.clear();
    }
}

//! Bar colours: a hue family per frame kind, varied within the family by a stable hash of the
//! name, so a function keeps its colour across profiles, zooms and sessions.

use crate::contract::kind::FrameKind;

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// CSS `#rrggbb` form.
    pub fn css(self) -> String {
        // By hand: `format!` costs ~1 µs a colour in wasm, and the table and the legends make
        // hundreds of them as a profile is shown.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(7);
        s.push('#');
        for b in [self.0, self.1, self.2] {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 15)]));
        }
        s
    }

    /// The colour as one `0xRRGGBB` number.
    pub fn packed(self) -> u32 {
        u32::from(self.0) << 16 | u32::from(self.1) << 8 | u32::from(self.2)
    }

    /// Linear blend towards `other` by `t` in 0..=1.
    pub fn mix(self, other: Rgb, t: f64) -> Rgb {
        let t = t.clamp(0.0, 1.0);
        let ch = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb(
            ch(self.0, other.0),
            ch(self.1, other.1),
            ch(self.2, other.2),
        )
    }
}

/// Which set of colours to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Palette {
    /// Warm flame-graph colours, one hue family per kind.
    #[default]
    Classic,
    /// Families picked from the Okabe–Ito set, distinguishable with common colour-vision deficiencies.
    ColorBlind,
}

/// Hue (degrees), saturation and lightness ranges of a kind's family.
struct Family {
    hue: f64,
    hue_spread: f64,
    sat: f64,
    light: f64,
}

fn family(kind: FrameKind, palette: Palette) -> Family {
    let f = |hue, hue_spread, sat, light| Family {
        hue,
        hue_spread,
        sat,
        light,
    };
    match palette {
        Palette::Classic => match kind {
            FrameKind::Root => f(30.0, 0.0, 0.10, 0.62),
            FrameKind::Process => f(265.0, 20.0, 0.45, 0.68),
            FrameKind::Thread => f(215.0, 20.0, 0.40, 0.68),
            FrameKind::App => f(16.0, 26.0, 0.78, 0.60),
            FrameKind::Library => f(45.0, 14.0, 0.80, 0.56),
            FrameKind::Kernel => f(185.0, 18.0, 0.50, 0.52),
            FrameKind::Cuda => f(110.0, 20.0, 0.45, 0.52),
            FrameKind::Unresolved => f(340.0, 10.0, 0.12, 0.66),
            FrameKind::Object => f(330.0, 16.0, 0.55, 0.66),
        },
        Palette::ColorBlind => match kind {
            FrameKind::Root => f(0.0, 0.0, 0.0, 0.62),
            FrameKind::Process => f(326.0, 8.0, 0.45, 0.70),
            FrameKind::Thread => f(202.0, 8.0, 0.60, 0.70),
            FrameKind::App => f(41.0, 8.0, 0.95, 0.58),
            FrameKind::Library => f(56.0, 6.0, 0.80, 0.62),
            FrameKind::Kernel => f(202.0, 8.0, 0.90, 0.42),
            FrameKind::Cuda => f(164.0, 8.0, 0.90, 0.35),
            FrameKind::Unresolved => f(0.0, 0.0, 0.0, 0.75),
            FrameKind::Object => f(24.0, 8.0, 0.90, 0.48),
        },
    }
}

/// The colour of a frame: its kind's family, shifted by a hash of `name`.
pub fn frame_color(kind: FrameKind, name: &str, palette: Palette) -> Rgb {
    let fam = family(kind, palette);
    let h = name_hash(name);
    // Two independent fractions from the hash: one for hue, one for lightness.
    let a = (h & 0xffff) as f64 / 65535.0;
    let b = ((h >> 16) & 0xffff) as f64 / 65535.0;
    let hue = fam.hue + (a - 0.5) * fam.hue_spread;
    let light = fam.light + (b - 0.5) * 0.10;
    hsl(hue, fam.sat, light)
}

/// What decides the colour of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorBy {
    /// Its kind's family, varied by name ([`frame_color`]).
    #[default]
    Kind,
    /// Its package or namespace ([`package_color`]).
    Package,
}

/// A frame's fill colour as `by` decides.
pub fn fill_color(kind: FrameKind, name: &str, palette: Palette, by: ColorBy) -> Rgb {
    match by {
        ColorBy::Kind => frame_color(kind, name, palette),
        ColorBy::Package => package_color(kind, name, palette),
    }
}

/// Colour by package: every frame of one package or namespace
/// ([`crate::tree::symbol::package_of`]) gets that package's colour ([`package_key_color`]);
/// frames without a package (C symbols, threads) keep their kind's hue, greyed, so packages
/// stand out.
pub fn package_color(kind: FrameKind, name: &str, palette: Palette) -> Rgb {
    match crate::tree::symbol::package_of(name) {
        Some(package) => package_key_color(package, palette),
        None => {
            let fam = family(kind, palette);
            let b = f64::from((name_hash(name) >> 16) & 0xffff) / 65535.0;
            hsl(fam.hue, fam.sat * 0.18, 0.74 + (b - 0.5) * 0.08)
        }
    }
}

/// The colour of a package: one of twelve well-separated hues (Okabe–Ito's seven in the
/// colour-blind palette), picked by a hash of its name, so it keeps its colour in every
/// profile.
pub fn package_key_color(package: &str, palette: Palette) -> Rgb {
    const CATEGORICAL: [Rgb; 12] = [
        Rgb(0x4e, 0x79, 0xa7),
        Rgb(0xf2, 0x8e, 0x2b),
        Rgb(0x59, 0xa1, 0x4f),
        Rgb(0xe1, 0x57, 0x59),
        Rgb(0x76, 0xb7, 0xb2),
        Rgb(0xed, 0xc9, 0x48),
        Rgb(0xb0, 0x7a, 0xa1),
        Rgb(0xff, 0x9d, 0xa7),
        Rgb(0x9c, 0x75, 0x5f),
        Rgb(0x86, 0xbc, 0xb6),
        Rgb(0xd3, 0x72, 0x95),
        Rgb(0xa0, 0xcb, 0xe8),
    ];
    let colors: &[Rgb] = match palette {
        Palette::Classic => &CATEGORICAL,
        Palette::ColorBlind => &OKABE_ITO,
    };
    colors[name_hash(package) as usize % colors.len()]
}

/// A wall-clock bar's colour: running (on-CPU) in warm orange, waiting (off-CPU) in cool blue
/// (Okabe–Ito's vermillion and blue in the colour-blind palette), the lightness varied a little
/// by name so that neighbours stay apart.
pub fn wall_color(running: bool, name: &str, palette: Palette) -> Rgb {
    let b = f64::from((name_hash(name) >> 16) & 0xffff) / 65535.0;
    let (hue, sat, light) = match (palette, running) {
        (Palette::Classic, true) => (22.0, 0.80, 0.58),
        (Palette::Classic, false) => (212.0, 0.55, 0.66),
        (Palette::ColorBlind, true) => (24.0, 1.0, 0.45),
        (Palette::ColorBlind, false) => (202.0, 1.0, 0.38),
    };
    hsl(hue, sat, light + (b - 0.5) * 0.08)
}

/// The legend's colour of running or waiting time.
pub fn wall_key_color(running: bool, palette: Palette) -> Rgb {
    wall_color(running, "", palette)
}

/// The colour of the kind itself, for the legend (the family's centre).
pub fn kind_color(kind: FrameKind, palette: Palette) -> Rgb {
    let fam = family(kind, palette);
    hsl(fam.hue, fam.sat, fam.light)
}

/// Self-mode shading: pale for frames with little self time, hot for the hottest.
/// `share` is the frame's self value divided by the largest self value shown.
pub fn self_heat(share: f64) -> Rgb {
    const COLD: Rgb = Rgb(0xf1, 0xe9, 0xe0);
    const HOT: Rgb = Rgb(0xd7, 0x30, 0x1f);
    // The square root lifts small shares so that moderately hot frames are still visible.
    COLD.mix(HOT, share.clamp(0.0, 1.0).sqrt())
}

/// Okabe–Ito's colours (without black), distinguishable with common colour-vision deficiencies.
const OKABE_ITO: [Rgb; 7] = [
    Rgb(0xe6, 0x9f, 0x00),
    Rgb(0x56, 0xb4, 0xe9),
    Rgb(0x00, 0x9e, 0x73),
    Rgb(0xf0, 0xe4, 0x42),
    Rgb(0x00, 0x72, 0xb2),
    Rgb(0xd5, 0x5e, 0x00),
    Rgb(0xcc, 0x79, 0xa7),
];

/// Colours of timeline series (groups), in rank order; the last is for [`other`] and groups
/// past the palette. The colour-blind palette is Okabe–Ito's.
///
/// [`other`]: crate::contract::explore::OTHER_GROUP
pub fn series_color(rank: usize, is_other: bool, palette: Palette) -> Rgb {
    const CLASSIC: [Rgb; 10] = [
        Rgb(0xe8, 0x6a, 0x2c),
        Rgb(0x3b, 0x82, 0xc4),
        Rgb(0x5a, 0xa4, 0x69),
        Rgb(0xc9, 0x4f, 0x7c),
        Rgb(0x8d, 0x6c, 0xc5),
        Rgb(0xd4, 0xa0, 0x17),
        Rgb(0x2a, 0xa1, 0x98),
        Rgb(0xa0, 0x5a, 0x2c),
        Rgb(0x6b, 0x8e, 0x23),
        Rgb(0xb0, 0x3a, 0x2e),
    ];
    const REST: Rgb = Rgb(0xa8, 0xa2, 0x98);
    let colors: &[Rgb] = match palette {
        Palette::Classic => &CLASSIC,
        Palette::ColorBlind => &OKABE_ITO,
    };
    if is_other {
        return REST;
    }
    colors.get(rank).copied().unwrap_or(REST)
}

/// A frame's colour in a diff: `t` is its change divided by the scale's end, from −1 (shrank
/// the most) through 0 (unchanged, neutral) to +1 (grew the most). Classic: blue → grey → red;
/// colour-blind-safe: blue → grey → orange. The square root makes small changes visible.
pub fn diff_color(t: f64, palette: Palette) -> Rgb {
    const NEUTRAL: Rgb = Rgb(0xdc, 0xd8, 0xd2);
    let (shrank, grew) = match palette {
        Palette::Classic => (Rgb(0x3b, 0x6f, 0xd6), Rgb(0xd9, 0x2d, 0x20)),
        Palette::ColorBlind => (Rgb(0x2c, 0x7b, 0xb6), Rgb(0xe6, 0x61, 0x01)),
    };
    let t = if t.is_finite() {
        t.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let end = if t < 0.0 { shrank } else { grew };
    NEUTRAL.mix(end, t.abs().sqrt())
}

/// The colour of merged sub-pixel runs.
pub const MERGED_COLOR: Rgb = Rgb(0xb8, 0xb2, 0xa8);

/// FNV-1a: tiny, stable across platforms and releases (unlike `std`'s hasher).
fn name_hash(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn hsl(hue: f64, sat: f64, light: f64) -> Rgb {
    let h = hue.rem_euclid(360.0) / 60.0;
    let c = (1.0 - (2.0 * light - 1.0).abs()) * sat;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = light - c / 2.0;
    let to8 = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Rgb(to8(r), to8(g), to8(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_stable_and_differ_by_kind() {
        let a = frame_color(FrameKind::App, "main", Palette::Classic);
        assert_eq!(a, frame_color(FrameKind::App, "main", Palette::Classic));
        assert_ne!(a, frame_color(FrameKind::Kernel, "main", Palette::Classic));
        assert_eq!(a.css().len(), 7);
        for c in [Rgb(0, 0, 0), Rgb(255, 255, 255), Rgb(1, 0xab, 0x10), a] {
            assert_eq!(c.css(), format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2));
            assert_eq!(format!("#{:06x}", c.packed()), c.css());
        }
    }

    #[test]
    fn a_package_keeps_one_colour_and_unscoped_names_stay_grey() {
        let by = |name| package_color(FrameKind::App, name, Palette::Classic);
        assert_eq!(by("java.util.HashMap.get"), by("java.util.ArrayList.add"));
        assert_eq!(
            by("tokio::runtime::park"),
            by("tokio::net::TcpStream::poll_read")
        );
        assert_ne!(
            by("tokio::runtime::park"),
            by("hyper::proto::h1::conn::poll")
        );
        let grey = by("ngx_http_process_request");
        let (max, min) = (
            grey.0.max(grey.1).max(grey.2),
            grey.0.min(grey.1).min(grey.2),
        );
        assert!(max - min < 30, "unscoped names are nearly grey: {grey:?}");
        assert_eq!(
            fill_color(FrameKind::App, "main", Palette::Classic, ColorBy::Kind),
            frame_color(FrameKind::App, "main", Palette::Classic)
        );
    }

    #[test]
    fn hsl_primaries() {
        assert_eq!(hsl(0.0, 1.0, 0.5), Rgb(255, 0, 0));
        assert_eq!(hsl(120.0, 1.0, 0.5), Rgb(0, 255, 0));
        assert_eq!(hsl(240.0, 1.0, 0.5), Rgb(0, 0, 255));
    }

    #[test]
    fn diff_colours_run_from_shrank_through_neutral_to_grew() {
        let neutral = diff_color(0.0, Palette::Classic);
        assert_eq!(neutral, diff_color(f64::NAN, Palette::Classic));
        let grew = diff_color(1.0, Palette::Classic);
        let shrank = diff_color(-1.0, Palette::Classic);
        assert!(
            grew.0 > grew.2 && shrank.2 > shrank.0,
            "red grew, blue shrank"
        );
        assert_eq!(diff_color(5.0, Palette::Classic), grew, "clamped");
        assert_ne!(diff_color(1.0, Palette::ColorBlind), grew);
    }

    #[test]
    fn heat_runs_from_cold_to_hot() {
        assert_eq!(self_heat(0.0), Rgb(0xf1, 0xe9, 0xe0));
        assert_eq!(self_heat(1.0), Rgb(0xd7, 0x30, 0x1f));
    }
}

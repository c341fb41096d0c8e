//! Standalone SVG export with flamegraph.pl-style interactivity: hover details, click to zoom,
//! reset, and search (Ctrl-F or the Search button). Names are XML-escaped; the embedded script
//! only reads data attributes and never evaluates names.

use std::fmt::Write as _;

use crate::tree::diff::DiffValues;
use crate::tree::profile::{NodeId, Profile};
use crate::view::color::{diff_color, frame_color, Palette};
use crate::view::format::{format_change, format_percent, format_value, ValueUnit};

/// SVG export settings. `SvgOptions::default()` documents the defaults.
#[derive(Clone, Debug)]
pub struct SvgOptions {
    /// Image width in px. Default 1200.
    pub width: f64,
    /// Row height in px. Default 16.
    pub row_height: f64,
    /// Frames narrower than this many px are left out. Default 0.1.
    pub min_width: f64,
    /// Title line. Default "Flame graph".
    pub title: String,
    /// Unit of the values. Default microseconds.
    pub unit: ValueUnit,
    /// Bar colours. Default [`Palette::Classic`].
    pub palette: Palette,
}

/// When the profile is a diff: its sides, so frames are coloured by change (with the scale
/// that gets the full colour) and titled with both sides' values.
#[derive(Clone, Copy, Debug)]
pub struct SvgDiff<'a> {
    /// The sides.
    pub values: &'a DiffValues,
    /// The change that gets the full colour.
    pub scale: f64,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions {
            width: 1200.0,
            row_height: 16.0,
            min_width: 0.1,
            title: "Flame graph".into(),
            unit: ValueUnit::Microseconds,
            palette: Palette::Classic,
        }
    }
}

/// The `<g>` of every frame wide enough to draw, and the deepest relative depth drawn.
fn frames(
    profile: &Profile,
    root: NodeId,
    opts: &SvgOptions,
    diff: Option<&SvgDiff<'_>>,
) -> (String, u32) {
    let base_depth = profile.depth(root);
    let total = profile.total(root).max(1) as f64;
    let scale = opts.width / total;
    let mut max_depth = 0;
    let mut frames = String::new();
    let start0 = profile.start(root);
    let end = profile.subtree_end(root);
    let mut node = root;
    while node < end {
        let w = profile.total(node) as f64 * scale;
        if w < opts.min_width {
            // Its whole subtree is narrower still.
            node = profile.subtree_end(node);
            continue;
        }
        let d = profile.depth(node) - base_depth;
        max_depth = max_depth.max(d);
        let x = (profile.start(node) - start0) as f64 * scale;
        let name = xml_escape(profile.name(node));
        let (info, color) = match diff {
            Some(d) => diff_frame(profile, node, d, opts),
            None => (
                format!(
                    "{} ({}, {} total, {} self)",
                    profile.name(node),
                    format_value(profile.total(node), opts.unit),
                    format_percent(profile.total(node), profile.total(root)),
                    format_value(profile.self_value(node), opts.unit)
                ),
                frame_color(profile.kind(node), profile.name(node), opts.palette).css(),
            ),
        };
        let info = xml_escape(&info);
        let _ = write!(
            frames,
            r#"<g class="f" data-x="{x:.3}" data-w="{w:.3}" data-d="{d}" data-n="{name}"><title>{info}</title><rect x="{x:.3}" y="0" width="{w:.3}" height="{h:.1}" fill="{color}" rx="2"/><text x="{tx:.3}" y="0"></text></g>"#,
            h = opts.row_height - 1.0,
            tx = x + 3.0
        );
        frames.push('\n');
        node += 1;
    }
    (frames, max_depth)
}

/// A diff frame's title (both sides, the change) and colour.
fn diff_frame(p: &Profile, node: NodeId, d: &SvgDiff<'_>, opts: &SvgOptions) -> (String, String) {
    let (b, c) = (&d.values.baseline, &d.values.comparison);
    let i = node as usize;
    let info = format!(
        "{} (baseline {}, comparison {}, {})",
        p.name(node),
        format_value(b.total[i], opts.unit),
        format_value(c.total[i], opts.unit),
        format_change(d.values.change(node))
    );
    let color = diff_color(d.values.change(node) / d.scale, opts.palette).css();
    (info, color)
}

/// Escapes text for XML content and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

const HEADER_PX: f64 = 40.0;
const FOOTER_PX: f64 = 24.0;

/// Renders the subtree of `root` (the root for the whole profile) as an SVG document.
pub fn render_svg(profile: &Profile, root: NodeId, opts: &SvgOptions) -> String {
    render_svg_diff(profile, root, opts, None)
}

/// [`render_svg`] of a diff's union tree, coloured by change.
pub fn render_svg_diff(
    profile: &Profile,
    root: NodeId,
    opts: &SvgOptions,
    diff: Option<SvgDiff<'_>>,
) -> String {
    let mut out = String::new();
    if profile.is_empty() {
        return empty_svg(opts);
    }
    let (frames, max_depth) = frames(profile, root, opts, diff.as_ref());
    let height = HEADER_PX + f64::from(max_depth + 1) * opts.row_height + FOOTER_PX;
    let _ = write!(
        out,
        r##"<?xml version="1.0" standalone="no"?>
<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" data-rows="{rows}" data-row-height="{rh}" data-top="{top}">
<style>text{{font:11px ui-monospace,Menlo,Consolas,monospace;fill:#111;pointer-events:none}} .f{{cursor:pointer}} .f:hover rect{{stroke:#111;stroke-width:1}} .m rect{{fill:#d946ef}} #title{{font:15px sans-serif}} #details,#controls{{font:12px sans-serif;fill:#333}} .hidden{{display:none}}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text id="title" x="{cx}" y="22" text-anchor="middle">{title}</text>
<text id="controls" x="10" y="22"><tspan id="reset" class="hidden" style="cursor:pointer;pointer-events:all">Reset zoom</tspan></text>
<text id="search" x="{sx}" y="22" text-anchor="end" style="cursor:pointer;pointer-events:all;font:12px sans-serif">Search</text>
<text id="details" x="10" y="{dy}"> </text>
<g id="frames">
{frames}</g>
<script type="text/ecmascript"><![CDATA[
{script}
]]></script>
</svg>
"##,
        w = opts.width,
        rows = max_depth + 1,
        rh = opts.row_height,
        top = HEADER_PX,
        cx = opts.width / 2.0,
        sx = opts.width - 10.0,
        dy = height - 8.0,
        title = xml_escape(&opts.title),
        script = SCRIPT,
    );
    out
}

fn empty_svg(opts: &SvgOptions) -> String {
    format!(
        r#"<?xml version="1.0" standalone="no"?><svg xmlns="http://www.w3.org/2000/svg" width="{}" height="60"><text x="10" y="30">{}: no samples</text></svg>"#,
        opts.width,
        xml_escape(&opts.title)
    )
}

/// Zoom, reset, search and details, in the spirit of flamegraph.pl's embedded script.
const SCRIPT: &str = r#"(function () {
  var svg = document.documentElement, W = +svg.getAttribute('width');
  var RH = +svg.getAttribute('data-row-height'), TOP = +svg.getAttribute('data-top');
  var rows = +svg.getAttribute('data-rows');
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var details = document.getElementById('details'), reset = document.getElementById('reset');
  var cw = 6.6;
  function y(d) { return TOP + (d) * RH; }
  function label(g, w) {
    var t = g.querySelector('text'), n = g.getAttribute('data-n'), fit = Math.floor((w - 6) / cw);
    t.textContent = fit < 3 ? '' : (n.length <= fit ? n : n.slice(0, fit - 1) + '\u2026');
  }
  function place(x0, w0, d0) {
    var s = W / w0;
    frames.forEach(function (g) {
      var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'), d = +g.getAttribute('data-d');
      var r = g.querySelector('rect'), t = g.querySelector('text');
      var inside = x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6;
      var nx = (x - x0) * s, nw = w * s;
      if (d < d0) { inside = x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6; nx = 0; nw = W; }
      g.classList.toggle('hidden', !inside || nw < 0.1);
      r.setAttribute('x', nx); r.setAttribute('width', nw); r.setAttribute('y', y(d));
      r.setAttribute('opacity', d < d0 ? 0.5 : 1);
      t.setAttribute('x', nx + 3); t.setAttribute('y', y(d) + RH * 0.7);
      label(g, nw);
    });
  }
  function zoom(g) {
    place(+g.getAttribute('data-x'), +g.getAttribute('data-w'), +g.getAttribute('data-d'));
    reset.classList.toggle('hidden', g === frames[0]);
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  reset.addEventListener('click', function () { zoom(frames[0]); });
  function search() {
    var term = prompt('Search (regular expression)', '');
    if (term === null) return;
    var re; try { re = new RegExp(term, 'i'); } catch (e) { details.textContent = 'Invalid regex'; return; }
    var n = 0;
    frames.forEach(function (g) { var m = term !== '' && re.test(g.getAttribute('data-n')); g.classList.toggle('m', m); if (m) n++; });
    details.textContent = term === '' ? ' ' : n + ' matching frames';
  }
  document.getElementById('search').addEventListener('click', search);
  window.addEventListener('keydown', function (e) { if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(); } });
  if (frames.length) zoom(frames[0]);
})();"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    #[test]
    fn names_are_escaped_and_every_visible_frame_is_drawn() {
        let p = parse_folded(
            "main;<script>alert(1)</script> 2\nmain;a&b 1\n",
            "app \"x\"",
        )
        .unwrap();
        let svg = render_svg(&p, 0, &SvgOptions::default());
        assert!(!svg.contains("<script>alert"), "raw name leaked");
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.contains("a&amp;b"));
        assert_eq!(svg.matches(r#"<g class="f""#).count(), 4);
        assert!(svg.contains(r#"data-rows="3""#));
    }

    #[test]
    fn a_zoomed_export_starts_at_the_zoomed_frame() {
        let p = parse_folded("main;a 2\nother 2\n", "app").unwrap();
        let a = p.find_path(&["main", "a"]);
        let main = p.parent(a).unwrap();
        let svg = render_svg(&p, main, &SvgOptions::default());
        assert_eq!(svg.matches(r#"<g class="f""#).count(), 2);
        assert!(!svg.contains("other"));
    }

    #[test]
    fn escape_handles_quotes_and_controls() {
        assert_eq!(xml_escape(r#"a"b'c<>&"#), "a&quot;b&#39;c&lt;&gt;&amp;");
        assert_eq!(xml_escape("a\u{1}b"), "a\u{fffd}b");
    }
}

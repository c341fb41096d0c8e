//! Tests of the heatmap's decisions: cells ↔ milliseconds, hit-testing, selections, colours.

use super::*;

fn map(columns: usize, slots: u32) -> Heatmap {
    let values: Vec<Vec<u64>> = (0..columns)
        .map(|c| (0..slots).map(|s| (c as u64) * 10 + u64::from(s)).collect())
        .collect();
    Heatmap::new(1_000, slots, &values).expect("a well-formed grid")
}

#[test]
fn answers_that_do_not_fit_say_why() {
    assert_eq!(Heatmap::new(0, 0, &[]), Err(HeatmapError::Slots(0)));
    assert_eq!(Heatmap::new(0, 1001, &[]), Err(HeatmapError::Slots(1001)));
    let err = Heatmap::new(0, 2, &[vec![1, 2], vec![1]]).unwrap_err();
    assert_eq!(err.to_string(), "second 1 has 1 slots, not 2");
    let empty = Heatmap::new(5, 50, &[]).expect("no seconds is a grid");
    assert_eq!((empty.columns(), empty.max(), empty.total()), (0, 0, 0));
    assert_eq!(empty.cell_at(&geometry(), 1.0, 1.0), None);
    assert!(empty.selection_areas(&geometry(), iv(0, 10)).is_empty());
}

fn geometry() -> Geometry {
    Geometry {
        width_css: 300.0,
        height_css: 100.0,
    }
}

fn iv(start_ms: i64, end_ms: i64) -> Interval {
    Interval { start_ms, end_ms }
}

#[test]
fn cells_tile_each_second_at_whole_milliseconds() {
    let m = map(3, 3);
    let cell = |column, slot| Cell { column, slot };
    // 1000 / 3: slots start at 0, 333 and 666 ms.
    assert_eq!(m.cell_interval(cell(0, 0)), iv(1_000_000, 1_000_333));
    assert_eq!(m.cell_interval(cell(0, 2)), iv(1_000_666, 1_001_000));
    assert_eq!(m.cell_interval(cell(2, 2)), iv(1_002_666, 1_003_000));
    // Either drag direction gives the same interval, last cell included.
    assert_eq!(m.interval(cell(1, 1), cell(0, 2)), iv(1_000_666, 1_001_666));
    assert_eq!(m.interval(cell(0, 2), cell(1, 1)), iv(1_000_666, 1_001_666));
    // Every millisecond maps back to the cell that holds it.
    for ms in 1_000_000..1_003_000 {
        let (c, _) = m.cells_of(iv(ms, ms + 1)).expect("inside");
        let i = m.cell_interval(c);
        assert!(i.start_ms <= ms && ms < i.end_ms, "{ms} in {c:?} = {i:?}");
    }
    assert_eq!(m.count(cell(2, 1)), 21);
    assert_eq!(m.count(cell(3, 0)), 0, "outside the grid");
    assert_eq!((m.max(), m.total()), (22, 3 * 3 + 3 * 30));
}

#[test]
fn the_pointer_finds_its_cell_and_a_drag_clamps_to_the_grid() {
    let m = map(3, 50);
    let g = geometry();
    assert_eq!(m.cell_at(&g, 0.0, 0.0), Some(Cell { column: 0, slot: 0 }));
    assert_eq!(
        m.cell_at(&g, 299.9, 99.9),
        Some(Cell {
            column: 2,
            slot: 49
        })
    );
    assert_eq!(
        m.cell_at(&g, 150.0, 50.0),
        Some(Cell {
            column: 1,
            slot: 25
        })
    );
    assert_eq!(m.cell_at(&g, 300.0, 5.0), None);
    assert_eq!(m.cell_at(&g, -1.0, 5.0), None);
    assert_eq!(
        m.cell_near(&g, 900.0, -40.0),
        Some(Cell { column: 2, slot: 0 })
    );
}

#[test]
fn a_selection_is_drawn_as_its_columns() {
    let m = map(4, 10);
    let g = Geometry {
        width_css: 400.0,
        height_css: 100.0,
    };
    // Inside one column: slots 2..=4 of second 1.
    assert_eq!(
        m.selection_areas(&g, iv(1_001_200, 1_001_500)),
        vec![Area {
            x: 100.0,
            y: 20.0,
            w: 100.0,
            h: 30.0
        }]
    );
    // From slot 8 of second 0 to slot 1 of second 3: the tail, two whole columns, the head.
    let areas = m.selection_areas(&g, iv(1_000_800, 1_003_200));
    assert_eq!(areas.len(), 3);
    assert_eq!((areas[0].x, areas[0].y, areas[0].h), (0.0, 80.0, 20.0));
    assert_eq!((areas[1].x, areas[1].w, areas[1].h), (100.0, 200.0, 100.0));
    assert_eq!((areas[2].x, areas[2].y, areas[2].h), (300.0, 0.0, 20.0));
    // Clamped to the grid; outside it nothing.
    assert_eq!(m.selection_areas(&g, iv(0, 1_000_100)).len(), 1);
    assert!(m.selection_areas(&g, iv(0, 1_000_000)).is_empty());
}

#[test]
fn colours_rise_with_the_count_and_empty_cells_stand_apart() {
    for dark in [false, true] {
        let s = HeatScale::new(100, dark);
        let lum =
            |c: Rgb| 0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2);
        let ramp: Vec<f64> = [1, 25, 50, 75, 100]
            .iter()
            .map(|&n| lum(s.color(n)))
            .collect();
        let monotone = ramp
            .windows(2)
            .all(|w| if dark { w[0] < w[1] } else { w[0] > w[1] });
        assert!(monotone, "dark={dark}: {ramp:?}");
        assert_ne!(s.color(0), s.color(1), "one sample is not nothing");
        assert_eq!(s.color(1000), s.color(100), "over the top clamps");
    }
}

#[test]
fn legend_ticks_are_round_and_end_at_the_top() {
    assert_eq!(HeatScale::new(100, false).legend_ticks(), [0, 50, 100]);
    assert_eq!(
        HeatScale::new(37, false).legend_ticks(),
        [0, 10, 20, 30, 37]
    );
    assert_eq!(HeatScale::new(21, false).legend_ticks(), [0, 10, 21]);
    assert_eq!(HeatScale::new(1, false).legend_ticks(), [0, 1]);
    assert_eq!(HeatScale::new(0, false).legend_ticks(), [0, 1]);
}

#[test]
fn the_image_has_a_pixel_per_cell_in_reading_order() {
    let m = map(2, 3);
    let s = HeatScale::new(m.max(), false);
    let mut px = Vec::new();
    fill_rgba(&m, &s, &mut px);
    assert_eq!(px.len(), 2 * 3 * 4);
    // Row 1 (slot 1), column 1: count 11.
    let at = (2 + 1) * 4;
    let Rgb(r, g, b) = s.color(11);
    assert_eq!(&px[at..at + 4], &[r, g, b, 255]);
    let Rgb(r, g, b) = s.color(0);
    assert_eq!(&px[0..4], &[r, g, b, 255]);
}

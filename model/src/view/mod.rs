//! Pure presentation: where bars go ([`layout`]), how they are painted ([`paint`]), their
//! colours ([`color`]) and how numbers read ([`format`]). The viewer's canvas only replays what
//! these decide, so every decision is tested natively.

pub mod color;
pub mod draw_list;
pub mod format;
pub mod function_timeline;
pub mod heatmap;
pub mod layout;
pub mod names;
pub mod navigate;
pub mod paint;
pub mod source;
pub mod stack_chart;
pub mod timeline;

//! What `import` read one file into: its batches, and what it says about them once stored
//! (`myapp.perf: imported 116 samples of myapp as 9 stacks (9 new) in 1 batch`).

use crate::store::{Batch, InsertStats};

/// What one file was read into.
pub struct FileBatches {
    /// The batches to store.
    pub batches: Vec<Batch>,
    /// The samples the file held, when the format counts them apart from the stored rows
    /// (perf: equal stacks are merged).
    pub samples: Option<usize>,
    /// What the user should know about how the file was read.
    pub notes: Vec<String>,
}

impl FileBatches {
    /// Batches without a count of their own or notes.
    pub fn of(batches: Vec<Batch>) -> FileBatches {
        FileBatches {
            batches,
            samples: None,
            notes: Vec::new(),
        }
    }

    /// `imported 116 samples of myapp as 9 stacks (9 new) in 1 batch`.
    pub fn summary(&self, stats: &InsertStats) -> String {
        let samples = self.samples.map_or(stats.samples, |n| n as u64);
        let mut apps: Vec<&str> = Vec::new();
        for batch in &self.batches {
            if !apps.contains(&batch.meta.app_service.as_str()) {
                apps.push(&batch.meta.app_service);
            }
        }
        let mut named = apps.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        if apps.len() > 3 {
            named.push_str(&format!(" and {} more", apps.len() - 3));
        }
        let n = self.batches.len();
        format!(
            "imported {samples} samples of {named} as {} stacks ({} new) in {n} batch{}",
            stats.samples,
            stats.new_stacks,
            if n == 1 { "" } else { "es" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{BatchMeta, Tags};

    fn batch(app: &str) -> Batch {
        Batch {
            meta: BatchMeta {
                app_service: app.into(),
                language: "eBPF".into(),
                event_type: "on-cpu".into(),
                unit: "microseconds".into(),
                tags: Tags::new(),
            },
            samples: Vec::new(),
        }
    }

    #[test]
    fn the_summary_counts_the_files_samples_and_names_its_processes() {
        let stats = InsertStats {
            samples: 9,
            new_stacks: 4,
        };
        let perf = FileBatches {
            batches: vec![batch("myapp")],
            samples: Some(116),
            notes: Vec::new(),
        };
        assert_eq!(
            perf.summary(&stats),
            "imported 116 samples of myapp as 9 stacks (4 new) in 1 batch"
        );
        let many = FileBatches::of(["a", "b", "a", "c", "d", "e"].map(batch).to_vec());
        assert_eq!(
            many.summary(&stats),
            "imported 9 samples of a, b, c and 2 more as 9 stacks (4 new) in 6 batches"
        );
    }
}

//! Alerts from the fleet: `serve --alert-rule '{...}'` (or `--alert-rules FILE`) checks, every
//! `--alert-interval`, whether any function's share of a service's CPU grew past a rule against
//! a baseline ([`eval`], over the function rollup), and POSTs each new alert to
//! `--alert-webhook` ([`webhook`]). A (rule, service) pair fires once, then again only after a
//! check finds it resolved ([`state`]). `GET /v1/alerts/dry-run` lists what would fire now.

pub mod eval;
pub mod rules;
pub mod state;
pub mod webhook;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use crate::store::Store;
use eval::Alert;
use rules::AlertRule;
use state::{Firing, FiringState};
use webhook::Webhook;

/// Options of `serve` for alerts.
#[derive(Debug, Clone, Default, Args)]
pub struct AlertArgs {
    /// An alert rule as JSON, e.g. '{"name": "cpu", "max_growth_points": 5, "baseline":
    /// "previous_day"}' (repeatable; see docs/alerts.md for every member).
    #[arg(long = "alert-rule", value_name = "JSON")]
    pub alert_rule: Vec<String>,
    /// A file holding a JSON array of alert rules.
    #[arg(long = "alert-rules", value_name = "FILE")]
    pub alert_rules: Option<PathBuf>,
    /// How often the rules are checked.
    #[arg(long, default_value = "1m", value_parser = humantime::parse_duration)]
    pub alert_interval: Duration,
    /// Where alerts are POSTed as JSON; without it rules are only listed by the dry run.
    #[arg(long, value_name = "URL")]
    pub alert_webhook: Option<String>,
    /// Where the viewer is reached, for the alerts' links [default: http://<--listen>].
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// The firing state's SQLite file [default: alerts.db beside a SQLite store; in memory
    /// with ClickHouse].
    #[arg(long, value_name = "FILE")]
    pub alert_state: Option<PathBuf>,
}

/// The rules, their state and where alerts go.
#[derive(Debug)]
pub struct Alerts {
    rules: Vec<AlertRule>,
    state: FiringState,
    webhook: Option<Webhook>,
    public_url: String,
    interval: Duration,
    checks: AtomicU64,
}

/// `GET /v1/alerts/dry-run`: what would fire now.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DryRun {
    /// The rules' names.
    pub rules: Vec<String>,
    /// Every alert the rules raise now, each as the webhook would receive it.
    pub would_fire: Vec<Alert>,
    /// The (rule, service) pairs firing (sent already: not sent again until resolved).
    pub firing: Vec<String>,
    /// Rules whose check failed, with why.
    pub errors: Vec<String>,
}

impl AlertArgs {
    /// The rules given (none: alerts are off).
    fn rules(&self) -> Result<Vec<AlertRule>, String> {
        let mut out = Vec::new();
        for text in &self.alert_rule {
            out.push(rules::parse_rule(text)?);
        }
        if let Some(file) = &self.alert_rules {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read --alert-rules {}: {e}", file.display()))?;
            out.extend(rules::parse_rules(&text, &file.display().to_string())?);
        }
        rules::distinct(out)
    }

    /// The alerts these options ask for, `None` without rules. `listen` is the serving
    /// address (the links' default base), `sqlite_db` the SQLite store's file when there is one.
    /// Starts the webhook's task, so it is called on the runtime.
    pub fn build(
        &self,
        listen: &str,
        sqlite_db: Option<&std::path::Path>,
    ) -> Result<Option<Arc<Alerts>>, String> {
        let rules = self.rules()?;
        if rules.is_empty() {
            if self.alert_webhook.is_some() {
                return Err("--alert-webhook needs --alert-rule or --alert-rules".into());
            }
            return Ok(None);
        }
        if self.alert_interval < Duration::from_secs(1) {
            return Err("--alert-interval must be 1s or more".into());
        }
        let webhook = match &self.alert_webhook {
            Some(url) => Some(Webhook::start(webhook::check_url(url)?)?),
            None => None,
        };
        let public_url = match &self.public_url {
            Some(u) => webhook::check_url(u)
                .map_err(|e| e.replace("--alert-webhook", "--public-url"))?
                .to_string(),
            None => format!("http://{listen}"),
        };
        let state_file = self
            .alert_state
            .clone()
            .or_else(|| sqlite_db.and_then(|db| Some(db.parent()?.join("alerts.db"))));
        let state = FiringState::open(state_file.as_deref())?;
        Ok(Some(Arc::new(Alerts {
            rules,
            state,
            webhook,
            public_url,
            interval: self.alert_interval,
            checks: AtomicU64::new(0),
        })))
    }
}

impl AlertArgs {
    /// [`AlertArgs::build`] for a serving store, and its checks started: `db` is `--db`
    /// (the firing state goes beside a SQLite store's file).
    pub fn start(
        &self,
        listen: &str,
        db: Option<&std::path::Path>,
        store: &Arc<Store>,
    ) -> Result<Option<Arc<Alerts>>, String> {
        let sqlite_db = match store.backend() {
            crate::store::Backend::Sqlite => Some(db.map_or_else(
                crate::store_args::default_db_path,
                std::path::Path::to_path_buf,
            )),
            crate::store::Backend::ClickHouse => None,
        };
        let alerts = self.build(listen, sqlite_db.as_deref())?;
        if let Some(a) = &alerts {
            tokio::spawn(run(a.clone(), store.clone()));
        }
        Ok(alerts)
    }
}

/// Unix seconds now.
fn now() -> i64 {
    crate::store::ingest::now_micros() / 1_000_000
}

impl Alerts {
    /// How many checks of every rule have completed (for tests and the log).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Acquire)
    }

    /// Every alert the rules raise at `at`, and the rules that failed.
    fn raised(&self, store: &Store, at: i64) -> (Vec<Alert>, Vec<(String, String)>) {
        let (mut alerts, mut errors) = (Vec::new(), Vec::new());
        for rule in &self.rules {
            match eval::check(store, rule, at, &self.public_url) {
                Ok(a) => alerts.extend(a),
                Err(e) => errors.push((rule.name.clone(), e.to_string())),
            }
        }
        (alerts, errors)
    }

    /// What would fire now (blocking: reads the store).
    pub fn dry_run(&self, store: &Store) -> Result<DryRun, String> {
        let (would_fire, errors) = self.raised(store, now());
        Ok(DryRun {
            rules: self.rules.iter().map(|r| r.name.clone()).collect(),
            would_fire,
            firing: self
                .state
                .all()?
                .into_iter()
                .map(|f| format!("{} / {}", f.rule, f.service))
                .collect(),
            errors: errors
                .into_iter()
                .map(|(r, e)| format!("{r}: {e}"))
                .collect(),
        })
    }

    /// One check: sends what starts firing, forgets what resolved (blocking).
    fn check_once(&self, store: &Store) -> Result<(), String> {
        let at = now();
        let (alerts, errors) = self.raised(store, at);
        for (rule, e) in &errors {
            tracing::warn!(rule = %rule, error = %e, "alert rule could not be checked");
        }
        for a in &alerts {
            let firing = Firing {
                rule: a.rule.clone(),
                service: a.service.clone(),
                function: a.function.clone(),
                since: at,
            };
            if self.state.fire(&firing)? {
                tracing::warn!(rule = %a.rule, service = %a.service, function = %a.function, change = a.change, "alert firing");
                if let Some(w) = &self.webhook {
                    w.send(a.clone());
                }
            }
        }
        // A pair resolves when its rule was checked and raised nothing for the service.
        let failed: Vec<&str> = errors.iter().map(|(r, _)| r.as_str()).collect();
        for f in self.state.all()? {
            let raised = alerts
                .iter()
                .any(|a| a.rule == f.rule && a.service == f.service);
            if !raised && !failed.contains(&f.rule.as_str()) {
                tracing::info!(rule = %f.rule, service = %f.service, "alert resolved");
                self.state.resolve(&f.rule, &f.service)?;
            }
        }
        Ok(())
    }
}

/// Checks the rules every interval until the process ends; each check runs on the blocking
/// pool, so serving never waits for it, and a failed check is logged and tried again next time.
pub async fn run(alerts: Arc<Alerts>, store: Arc<Store>) {
    let mut ticks = tokio::time::interval(alerts.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (a, s) = (alerts.clone(), store.clone());
        let done = crate::blocking::run("alert check", move || a.check_once(&s)).await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "alert check failed"),
            Err(failed) => tracing::warn!("{failed}"),
        }
        alerts.checks.fetch_add(1, Ordering::AcqRel);
    }
}

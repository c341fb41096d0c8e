//! Sending alerts to the webhook: from a queue on a task of its own, so a slow or failing
//! receiver never holds up a check or a request. Each POST has bounded timeouts; redirects are
//! never followed (a receiver cannot send an alert on to an internal address); a failure is
//! logged and retried with doubling waits, a few times, then dropped with a log line. The
//! queue is bounded: when full, an alert is dropped with a log line rather than held.

use std::time::Duration;

use tokio::sync::mpsc;

use super::eval::Alert;

/// Alerts waiting to be sent, at most.
const QUEUE: usize = 256;
/// Tries per alert.
const TRIES: u32 = 5;
/// The first wait after a failure; each next one doubles, up to [`MAX_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
const MAX_WAIT: Duration = Duration::from_secs(30);
/// Time to connect, and for the whole request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const TIMEOUT: Duration = Duration::from_secs(10);

/// The sending end of the queue.
#[derive(Debug, Clone)]
pub struct Webhook {
    queue: mpsc::Sender<Alert>,
}

/// Checks a webhook URL: http or https with a host.
pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("--alert-webhook {url}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(format!(
            "--alert-webhook must be an http(s) URL with a host, got {url}"
        ));
    }
    Ok(parsed)
}

impl Webhook {
    /// Starts the sending task for `url` (on the current Tokio runtime).
    pub fn start(url: reqwest::Url) -> Result<Webhook, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the webhook client: {e}"))?;
        let (queue, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(send_all(client, url, receiver));
        Ok(Webhook { queue })
    }

    /// Queues `alert` (never waits).
    pub fn send(&self, alert: Alert) {
        if let Err(e) = self.queue.try_send(alert) {
            tracing::warn!(error = %e, "alert webhook: the queue is full, an alert is dropped");
        }
    }
}

async fn send_all(client: reqwest::Client, url: reqwest::Url, mut queue: mpsc::Receiver<Alert>) {
    while let Some(alert) = queue.recv().await {
        let mut wait = FIRST_WAIT;
        for attempt in 1..=TRIES {
            match post(&client, &url, &alert).await {
                Ok(()) => {
                    tracing::info!(rule = %alert.rule, service = %alert.service, function = %alert.function, "alert sent");
                    break;
                }
                Err(e) if attempt == TRIES => {
                    tracing::error!(rule = %alert.rule, service = %alert.service, error = %e, "alert webhook failed {TRIES} times, the alert is dropped");
                }
                Err(e) => {
                    tracing::warn!(rule = %alert.rule, error = %e, attempt, "alert webhook failed, retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_WAIT);
                }
            }
        }
    }
}

async fn post(client: &reqwest::Client, url: &reqwest::Url, alert: &Alert) -> Result<(), String> {
    let response = client
        .post(url.clone())
        .json(alert)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        // A redirect is an answer too: not followed, so not delivered.
        Err(format!("the receiver answered {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls_with_a_host() {
        assert!(check_url("http://127.0.0.1:9/hook").is_ok());
        assert!(check_url("https://hooks.example/x").is_ok());
        for bad in ["file:///etc/passwd", "not a url", "ftp://x/"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}

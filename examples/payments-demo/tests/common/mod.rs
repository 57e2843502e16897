//! The harness of the hostile-input, admin and shutdown suites: fakes, the service and
//! its admin listener on 127.0.0.1, and a raw HTTP/1.1 client that sends a request
//! target exactly as written (reqwest would normalise `%2E%2E` and the like).

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use outbound_guard_tests::recorder::Recorder;
use payments_demo::bootstrap::{load_settings_with, Container};
use payments_demo::fakes::{self, FakeUpstream};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Harness {
    pub sber: FakeUpstream,
    pub customer: FakeUpstream,
    pub container: Container,
    /// Every transition and call the service's guards reported.
    pub recorder: Arc<Recorder>,
    pub url: String,
    pub admin_url: String,
    pub client: reqwest::Client,
    server: tokio::task::JoinHandle<()>,
    admin: tokio::task::JoinHandle<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.server.abort();
        self.admin.abort();
    }
}

/// Fakes, the service between them (admin token `admin_token`, if any), and a client.
pub async fn start(admin_token: Option<&str>) -> Harness {
    start_with(&[], admin_token).await
}

/// [`start`], with `env` overriding the settings as `CLIENT_…` variables would.
pub async fn start_with(env: &[(&str, &str)], admin_token: Option<&str>) -> Harness {
    let sber = fakes::sber(fakes::bind().await.unwrap()).unwrap();
    let customer = fakes::customer(fakes::bind().await.unwrap()).unwrap();
    let mut vars = vec![
        ("CLIENT_SBER__BASE_URL".to_owned(), sber.url()),
        ("CLIENT_CUSTOMER__BASE_URL".to_owned(), customer.url()),
    ];
    vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let settings = load_settings_with(vars).unwrap();
    let recorder = Arc::new(Recorder::default());
    let container = Container::build(&settings, vec![recorder.clone()])
        .unwrap()
        .with_admin_token(admin_token.map(str::to_owned));
    let listener = fakes::bind().await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = container.router();
    let server = tokio::spawn(async move {
        payments_demo::bootstrap::serve(listener, router)
            .await
            .unwrap();
    });
    let admin_listener = fakes::bind().await.unwrap();
    let admin_url = format!("http://{}", admin_listener.local_addr().unwrap());
    let admin_router = container.admin_router();
    let admin = tokio::spawn(async move {
        payments_demo::bootstrap::serve(admin_listener, admin_router)
            .await
            .unwrap();
    });
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    Harness {
        sber,
        customer,
        container,
        recorder,
        url,
        admin_url,
        client,
        server,
        admin,
    }
}

/// An answer read off the wire.
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    pub body: String,
}

impl RawAnswer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// `GET target` over a fresh connection to `base` (`http://127.0.0.1:PORT`), the
/// target sent byte for byte; within 10 s.
pub async fn raw_get(base: &str, target: &str) -> RawAnswer {
    let addr = base.strip_prefix("http://").unwrap().to_owned();
    let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tokio::time::timeout(Duration::from_secs(10), async move {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).await.unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        RawAnswer { status, body }
    })
    .await
    .expect("bounded")
}

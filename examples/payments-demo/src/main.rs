//! `cargo run -p payments-demo [-- --serve]`: plays the demo scenario against fake Sber
//! and customer servers on 127.0.0.1 and exits 0 when every expected breaker transition
//! happened. `--serve` keeps the service running afterwards for manual `curl`.

use std::process::ExitCode;

use payments_demo::bootstrap;
use payments_demo::scenario::{self, env, Setup};

const USAGE: &str = "usage: payments-demo [--serve]

Plays the demo scenario: fake Sber and customer servers on 127.0.0.1, the payments
service between them, load over HTTP, Sber failing and then slow. Prints each breaker
transition as it happens and one line per second; exits 0 when every expected
transition happened.

  --serve   keep the service (and the fakes) running after the scenario, for curl,
            until SIGTERM or Ctrl-C (requests in flight are answered first);
            the operator routes (/admin/breakers/...) and /metrics are on a separate
            admin listener on 127.0.0.1, whose URL is printed with the others
  --help    this text

DEMO_ADMIN_TOKEN: the bearer token the operator routes need
(Authorization: Bearer <token>); unset, they are refused. /metrics needs none.
DEMO_RECORD=FILE: record every guarded call and breaker transition to FILE (JSON
lines), to replay them with `outbound-guard replay FILE`.

Settings: examples/payments-demo/resilience.toml, or the file RESILIENCE_SETTINGS names
(watched: an edit, such as cb_mode = \"forced_open\" for sber, is reloaded while the
service runs), overridden by CLIENT_<SYSTEM>__<KEY> variables
(e.g. CLIENT_SBER__CB_OPEN_DURATION=3). The demo sets short durations itself where
you have not.";

fn main() -> ExitCode {
    let mut serve = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--serve" => serve = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown argument `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match start(serve) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("payments-demo: {message}");
            ExitCode::FAILURE
        }
    }
}

fn start(serve: bool) -> Result<bool, String> {
    // Bind first, while the process has one thread: the fakes' URLs go into the
    // environment before the settings are loaded, as any user override would.
    let bind = || {
        std::net::TcpListener::bind(("127.0.0.1", 0))
            .map_err(|e| format!("cannot bind 127.0.0.1: {e}"))
    };
    // The admin listener (operator routes, metrics) is its own port on 127.0.0.1,
    // apart from the public API's.
    let (sber, customer, service, admin) = (bind()?, bind()?, bind()?, bind()?);
    let url = |l: &std::net::TcpListener| {
        l.local_addr()
            .map(|a| format!("http://{a}"))
            .map_err(|e| e.to_string())
    };
    let env = env::apply(&[("sber", url(&sber)?), ("customer", url(&customer)?)]);
    let settings = bootstrap::load_settings().map_err(|e| {
        let demo: Vec<String> = env
            .iter()
            .filter(|s| s.source == env::Source::Demo)
            .map(|s| format!("{}={}", s.name, s.value))
            .collect();
        format!(
            "{e}\n(the demo set {} because you had not; set them yourself to change them)",
            demo.join(" ")
        )
    })?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let setup = Setup {
        settings,
        env,
        sber,
        customer,
        service,
        admin,
    };
    let outcome = runtime
        .block_on(scenario::run(setup, serve))
        .map_err(|e| e.to_string())?;
    Ok(outcome.passed())
}

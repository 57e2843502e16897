//! The example service started as a real process, among a hostile environment: the
//! application's own `CLIENT_*` secrets must not stop it; a typo of one of our keys
//! must, with one readable line from `main`'s `Result`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};

/// A one-shot HTTP server on 127.0.0.1 answering `paid-42`.
fn sber() -> String {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut chunk = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\npaid-42",
            );
        }
    });
    url
}

fn run(vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_use-it-example"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CLIENT_") {
            command.env_remove(&name);
        }
    }
    command.envs(vars.iter().copied());
    command.output().unwrap()
}

const SECRETS: [(&str, &str); 5] = [
    ("CLIENT_PAYMENTS_TOKEN", "xyz"),
    ("CLIENT_STRIPE__API_KEY", "k"),
    ("CLIENT_PAYMENTS__API_KEY", "k"),
    ("CLIENT_ID", "42"),
    ("CLIENT_SBER__API_KEY", "secret"),
];

#[test]
fn the_service_starts_among_the_applications_client_secrets() {
    let url = sber();
    let mut vars = SECRETS.to_vec();
    vars.push(("CLIENT_SBER__BASE_URL", &url));
    let out = run(&vars);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout, "paid: paid-42\n", "{stderr}");
}

#[test]
fn a_typo_of_one_of_our_keys_stops_it_with_one_readable_line() {
    let mut vars = SECRETS.to_vec();
    vars.push(("CLIENT_SBER__CB_FAILUR_RATE", "0.5"));
    let out = run(&vars);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: environment variable `CLIENT_SBER__CB_FAILUR_RATE`: no key `cb_failur_rate`; did you mean `CLIENT_SBER__CB_FAILURE_RATE`?\n"
    );
    // An unknown system, near a known one.
    let out = run(&[("CLIENT_SBR__CB_FAILURE_RATE", "0.5")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "Error: environment variable `CLIENT_SBR__CB_FAILURE_RATE`: no system `sbr`"
        ),
        "{stderr}"
    );
}

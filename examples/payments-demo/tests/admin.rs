//! The operator's controls on the admin listener: a control action needs
//! the bearer token from `DEMO_ADMIN_TOKEN`; without one configured the controls are
//! refused; the metrics scrape needs no token.

mod common;

use outbound_guard::State;

const TOKEN: &str = "test-token-7f3a9c";

async fn post(h: &common::Harness, path: &str, auth: Option<&str>) -> (u16, String) {
    let mut request = h.client.post(format!("{}{path}", h.admin_url));
    if let Some(value) = auth {
        request = request.header("authorization", value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

fn sber_state(h: &common::Harness) -> State {
    h.container.sber.system_guard().breaker().state()
}

#[tokio::test]
async fn controls_without_the_right_token_are_401_and_change_nothing() {
    let h = common::start(Some(TOKEN)).await;
    let wrong = format!("Bearer {TOKEN}x");
    let short = format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]);
    let basic = format!("Basic {TOKEN}");
    let lower = format!("bearer {}", TOKEN.to_uppercase());
    for auth in [
        None,
        Some(""),
        Some("Bearer"),
        Some("Bearer "),
        Some(wrong.as_str()),
        Some(short.as_str()),
        Some(basic.as_str()),
        Some(lower.as_str()),
    ] {
        for action in ["force_open", "disable", "reset"] {
            let (status, body) = post(&h, &format!("/admin/breakers/sber/{action}"), auth).await;
            assert_eq!(status, 401, "{auth:?} {action}: {body}");
            assert!(body.contains("unauthorized"), "{body}");
            assert_eq!(sber_state(&h), State::Closed, "{auth:?} {action}");
        }
    }
}

#[tokio::test]
async fn controls_with_the_right_token_act() {
    let h = common::start(Some(TOKEN)).await;
    let auth = format!("Bearer {TOKEN}");
    let (status, body) = post(&h, "/admin/breakers/sber/force_open", Some(&auth)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(sber_state(&h), State::ForcedOpen);
    let (status, body) = post(&h, "/admin/breakers/sber/reset", Some(&auth)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(sber_state(&h), State::Closed);
    // The scheme is case-insensitive (RFC 9110); the token is not.
    let (status, _) = post(
        &h,
        "/admin/breakers/sber/disable",
        Some(&format!("bearer {TOKEN}")),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(sber_state(&h), State::Disabled);
}

#[tokio::test]
async fn an_action_that_finds_its_state_answers_that_it_changed_nothing() {
    let h = common::start(Some(TOKEN)).await;
    let auth = format!("Bearer {TOKEN}");
    let changed = |body: &str| {
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        json["changed"].as_bool().unwrap()
    };
    let (status, body) = post(&h, "/admin/breakers/sber/reset", Some(&auth)).await;
    assert_eq!(status, 200, "{body}");
    assert!(!changed(&body), "reset of an empty closed breaker: {body}");
    for action in ["force_open", "disable", "reset"] {
        let (status, body) = post(&h, &format!("/admin/breakers/sber/{action}"), Some(&auth)).await;
        assert_eq!(status, 200, "{body}");
        assert!(changed(&body), "{action}: {body}");
        let (status, body) = post(&h, &format!("/admin/breakers/sber/{action}"), Some(&auth)).await;
        assert_eq!(status, 200, "{body}");
        assert!(!changed(&body), "{action} again: {body}");
    }
    assert_eq!(sber_state(&h), State::Closed);
}

#[tokio::test]
async fn with_no_token_configured_every_control_is_refused() {
    let h = common::start(None).await;
    for auth in [None, Some("Bearer "), Some("Bearer anything")] {
        let (status, body) = post(&h, "/admin/breakers/sber/force_open", auth).await;
        assert_eq!(status, 403, "{auth:?}: {body}");
        assert!(body.contains("DEMO_ADMIN_TOKEN"), "{body}");
    }
    assert_eq!(sber_state(&h), State::Closed);
}

#[tokio::test]
async fn the_metrics_scrape_and_readiness_need_no_token() {
    for token in [Some(TOKEN), None] {
        let h = common::start(token).await;
        let response = h
            .client
            .get(format!("{}/metrics", h.admin_url))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let text = response.text().await.unwrap();
        assert!(text.contains("system=\"sber\""), "{text}");
        let response = h
            .client
            .get(format!("{}/health/ready", h.admin_url))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
    }
}

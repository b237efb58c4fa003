//! Signing in and staying signed in: the link token, the session cookie and its lifetime,
//! switching people, and what the page serves to whom before that.

use super::*;

#[tokio::test]
async fn every_page_needs_the_token() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    for url in [site.base.clone(), site.request_url(&id)] {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{url}");
        assert_secure_headers(response.headers());
        assert!(response.headers().contains_key(header::WWW_AUTHENTICATE));
        let page = response.text().await.unwrap();
        assert!(page.contains("needs its access token"), "{page}");
        assert!(!page.contains("Buy gpu"), "{page}");
    }
    let wrong = http()
        .get(format!("{}?token=not-the-token", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(!wrong.headers().contains_key(header::SET_COOKIE));
    let forged = get("toolnexus_inbox_00000000=abc", &site.base).await;
    assert_eq!(forged.0, StatusCode::UNAUTHORIZED);
    let bad_bearer = http()
        .get(&site.base)
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_bearer.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_link_token_moves_into_an_expiring_http_only_lax_cookie() {
    let site = Site::start().await;
    site.approval("gpu").await;
    let response = http()
        .get(format!("{}?token={}", site.base, site.token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "./");
    assert_secure_headers(response.headers());
    let set = set_cookie(response.headers());
    let lifetime = web::DEFAULT_SESSION_LIFETIME.as_secs();
    let attributes = attributes(&set);
    for attribute in [
        "HttpOnly".to_owned(),
        "SameSite=Lax".to_owned(),
        "Path=/".to_owned(),
        format!("Max-Age={lifetime}"),
    ] {
        assert!(attributes.contains(&attribute), "{set}");
    }
    // Served over plain http on loopback: a Secure cookie would never come back.
    assert!(!attributes.iter().any(|a| a == "Secure"), "{set}");
    assert!(
        !set.contains(&site.token),
        "the cookie must not hold the token itself: {set}"
    );

    let cookie = set.split(';').next().unwrap();
    let (status, page) = get(cookie, &site.base).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("1 request waiting"), "{page}");
    assert!(page.contains("Buy gpu?"), "{page}");

    let bearer = http()
        .get(&site.base)
        .bearer_auth(&site.token)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), StatusCode::OK);
    // A bearer comes with every request: it opens no session.
    assert!(!bearer.headers().contains_key(header::SET_COOKIE));
}

#[tokio::test]
async fn a_session_ends_with_its_lifetime_by_the_inbox_clock() {
    let hour = Duration::from_secs(3600);
    let site = Site::on_clock(|page| page.session_lifetime(hour)).await;
    let set = link_sign_in(&site, &site.token).await;
    assert!(
        attributes(&set).contains(&"Max-Age=3600".to_owned()),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_owned();

    site.clock.advance(hour - Duration::from_secs(1));
    assert_eq!(get(&cookie, &site.base).await.0, StatusCode::OK);
    site.clock.advance(Duration::from_secs(1));
    let ended = fetch(&cookie, &site.base).await;
    assert_eq!(ended.status(), StatusCode::UNAUTHORIZED);
    let gone = set_cookie(ended.headers());
    assert!(
        gone.starts_with(&format!("{}=;", cookie.split('=').next().unwrap())),
        "{gone}"
    );
    assert!(
        attributes(&gone).contains(&"Max-Age=0".to_owned()),
        "{gone}"
    );
    let page = ended.text().await.unwrap();
    assert!(page.contains("Your session has ended"), "{page}");

    // A session is good for the lifetime from when it was opened, however it is altered.
    let fresh = session(&site).await;
    assert_eq!(get(&fresh, &site.base).await.0, StatusCode::OK);
    let (name, value) = fresh.split_once('=').unwrap();
    let fields: Vec<&str> = value.split('.').collect();
    assert_eq!(fields.len(), 3, "who, until, signature: {value}");
    let until: i64 = fields[1].parse().unwrap();
    let stretched = format!("{name}={}.{}.{}", fields[0], until + 86_400_000, fields[2]);
    let mut signature = fields[2].to_owned();
    let last = if signature.ends_with('0') { "1" } else { "0" };
    signature.replace_range(signature.len() - 1.., last);
    let tampered = format!("{name}={}.{}.{signature}", fields[0], fields[1]);
    for cookie in [stretched, tampered] {
        let (status, page) = get(&cookie, &site.base).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{cookie}");
        assert!(page.contains("not valid for this inbox"), "{page}");
    }
}

#[tokio::test]
async fn the_token_leaves_the_address_bar_and_the_rest_of_the_query_stays() {
    let site = Site::start().await;
    let id = site.approval("gpu").await;
    let cases = [
        (
            format!(
                "{}?agent=shop&token={}&kind=approval",
                site.base, site.token
            ),
            "./?agent=shop&kind=approval".to_owned(),
        ),
        (
            format!("{}?token={}&from=0", site.request_url(&id), site.token),
            format!("{id}?from=0"),
        ),
    ];
    for (link, expected) in cases {
        let response = http().get(&link).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{link}");
        assert_eq!(response.headers()[header::LOCATION], expected.as_str());
        assert!(response.headers().contains_key(header::SET_COOKIE));
    }
    // Nothing but the switch's own form posts to a link: an answer with a token in its
    // address is refused, and signs nobody in.
    let response = http()
        .post(format!("{}?token={}", site.request_url(&id), site.token))
        .header(header::ORIGIN, site.base.trim_end_matches('/'))
        .form(&[("_action", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(!response.headers().contains_key(header::SET_COOKIE));
    assert_eq!(state_of(&site, &id).await, ParkedState::Waiting);
}

#[tokio::test]
async fn another_persons_link_asks_before_the_session_switches() {
    let (ada_token, bob_token) = (web::new_token().unwrap(), web::new_token().unwrap());
    let (a, b) = (ada_token.clone(), bob_token.clone());
    let site = Site::on_clock(move |page| {
        page.token_for(
            toolnexus_inbox::Person::new("ada@example.com").name("Ada"),
            a,
        )
        .token_for(
            toolnexus_inbox::Person::new("bob@example.com").name("Bob"),
            b,
        )
    })
    .await;
    let ada = session_of(&site, &ada_token).await;
    let signed_in_as = |page: &str, who: &str| {
        page.contains(&format!(
            "Signed in as <strong class=\"who\">{who}</strong>"
        ))
    };

    // Ada's own link again: straight on, no question.
    let again = fetch(&ada, &format!("{}?token={ada_token}", site.base)).await;
    assert_eq!(again.status(), StatusCode::SEE_OTHER);

    // Bob's link in Ada's browser: a question, and nothing changed yet.
    let bobs_link = format!("{}?agent=shop&token={bob_token}", site.base);
    let asked = fetch(&ada, &bobs_link).await;
    assert_eq!(asked.status(), StatusCode::OK);
    assert!(!asked.headers().contains_key(header::SET_COOKIE));
    let prompt = asked.text().await.unwrap();
    assert!(signed_in_as(&prompt, "Ada"), "{prompt}");
    assert!(prompt.contains("Sign in as Bob"), "{prompt}");
    assert!(
        prompt.contains(r#"href="./?agent=shop""#),
        "a way on as Ada: {prompt}"
    );
    let (_, list) = get(&ada, &site.base).await;
    assert!(signed_in_as(&list, "Ada"), "{list}");

    let host = site
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let confirm = |cookie: &str, origin: &str, fields: Vec<(&'static str, String)>| {
        http()
            .post(&bobs_link)
            .header(header::COOKIE, cookie)
            .header(header::ORIGIN, origin)
            .form(&fields)
            .send()
    };
    let token = forgery_token(&prompt);
    let own = format!("http://{host}");
    // Without the form's token, from another site, or from a browser the form was not made
    // for: refused, and no session changes hands.
    for (cookie, origin, fields) in [
        (ada.as_str(), own.as_str(), vec![]),
        (
            ada.as_str(),
            "http://evil.example",
            vec![("_forgery", token.clone())],
        ),
        ("", own.as_str(), vec![("_forgery", token.clone())]),
    ] {
        let refused = confirm(cookie, origin, fields).await.unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{cookie} {origin}");
        assert!(!refused.headers().contains_key(header::SET_COOKIE));
    }

    // Confirmed from the question's own form: Bob now, on the page the link named.
    let switched = confirm(&ada, &own, vec![("_forgery", token)])
        .await
        .unwrap();
    assert_eq!(switched.status(), StatusCode::SEE_OTHER);
    assert_eq!(switched.headers()[header::LOCATION], "./?agent=shop");
    let set = set_cookie(switched.headers());
    let bob = set.split(';').next().unwrap();
    assert_eq!(
        bob.split('=').next(),
        ada.split('=').next(),
        "one session per browser"
    );
    let (_, list) = get(bob, &site.base).await;
    assert!(signed_in_as(&list, "Bob"), "{list}");
}

#[tokio::test]
async fn the_cookie_is_secure_and_scoped_where_the_page_is_served_over_https() {
    let inbox = Inbox::builder("sqlite::memory:")
        .page_url("https://inbox.example.com/team/inbox/")
        .open()
        .await
        .unwrap();
    let site = Site::serve(inbox, |page| page).await;
    let set = link_sign_in(&site, &site.token).await;
    let attributes = attributes(&set);
    assert!(attributes.contains(&"Secure".to_owned()), "{set}");
    assert!(attributes.contains(&"Path=/team/inbox".to_owned()), "{set}");

    // Behind a proxy that terminates TLS, its word counts only when trusted by name.
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    for (trusted, secure) in [(vec![], false), (vec![web::ProxyHeader::Proto], true)] {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let site = Site::serve(inbox, |page| {
            page.trusted_proxy([loopback]).trust_proxy_headers(trusted)
        })
        .await;
        let response = http()
            .get(format!("{}?token={}", site.base, site.token))
            .header("x-forwarded-proto", "https")
            .send()
            .await
            .unwrap();
        let set = set_cookie(response.headers());
        assert_eq!(set.contains("; Secure"), secure, "{set}");
    }
}

#[tokio::test]
async fn the_stylesheet_is_public_and_nothing_else_is() {
    let site = Site::start().await;
    let css = http()
        .get(format!("{}style.css", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(css.status(), StatusCode::OK);
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );
    assert_secure_headers(css.headers());
    let cookie = session(&site).await;
    let (status, _) = get(&cookie, &format!("{}nowhere", site.base)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let put = http()
        .put(site.request_url("x"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
}

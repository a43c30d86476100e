use super::*;

fn read(text: &str) -> Conninfo {
    Conninfo::parse(text).unwrap_or_else(|r| panic!("{text}: {}: {}", r.shown, r.why))
}

fn refused(text: &str) -> Refused {
    match Conninfo::parse(text) {
        Ok(info) => panic!("{text} read as {info:?}"),
        Err(r) => r,
    }
}

fn pairs(info: &Conninfo) -> Vec<(&str, &str)> {
    info.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Issue 42, item 1: a password with an unencoded `/`, `?` or `@`.
#[test]
fn a_password_with_a_slash_a_question_mark_or_an_at_is_never_shown() {
    // `?` before the `@`: libpq reads it as part of the password, and so does trajan.
    let info = read("postgres://ann:Sekr1t?Xy9@127.0.0.1:5433/db?sslmode=disable");
    assert_eq!(info.shown, "postgres://ann:***@127.0.0.1:5433/db?sslmode=disable");
    assert_eq!(info.get("password"), Some("Sekr1t?Xy9"));
    assert_eq!((info.get("host"), info.get("port"), info.get("dbname")), (Some("127.0.0.1"), Some("5433"), Some("db")));
    // `@` in it: libpq would take `Xy9@127.0.0.1` for the host (and resolve it); `/`: the user
    // for the host, `Sekr1t` for the port, `Xy9@...` for the database. Refused, nothing shown.
    for url in [
        "postgres://ann:Sekr1t@Xy9@127.0.0.1/db",
        "postgres://ann:Sekr1t@Xy9@127.0.0.1",
        "postgresql://ann:Sekr1t/Xy9@127.0.0.1:5432/db",
        "postgres://ann:Sekr1t/Xy9?sslmode=disable@127.0.0.1/db",
        "postgres://ann:Sekr1t/Xy9?k=v@127.0.0.1",
        "postgres://Sekr1t?Xy9@127.0.0.1/db",
    ] {
        let r = refused(url);
        let said = format!("{}: {}", r.shown, r.why);
        assert!(!said.contains("Sekr1t") && !said.contains("Xy9") && !said.contains("127.0.0.1"), "{said}");
        assert!(r.why.contains("%40") && r.why.contains("%2F"), "says how to write it: {said}");
    }
    // Encoded, they are read.
    let info = read("postgres://ann:Sekr1t%2FXy9%40%3F@127.0.0.1/db");
    assert_eq!(info.get("password"), Some("Sekr1t/Xy9@?"));
    assert_eq!(info.shown, "postgres://ann:***@127.0.0.1/db");
}

#[test]
fn libpq_key_value_pairs_are_read_as_a_connection_string() {
    for text in ["host=127.0.0.1 password=x", "  dbname = d", "sslmode=disable host=h"] {
        assert!(is_conninfo(text), "{text}");
    }
    for text in ["runs.db", "./host=x.db", "dir/host=x.db", "host.db", "hostname=x", "=x"] {
        assert!(!is_conninfo(text), "{text}");
    }
    let info = read(r"host=127.0.0.1 port = 5433 user=ann password='Sekr1t Xy9\'s' dbname=my\ db");
    assert_eq!(
        pairs(&info),
        [("host", "127.0.0.1"), ("port", "5433"), ("user", "ann"), ("password", "Sekr1t Xy9's"), ("dbname", "my db")]
    );
    assert_eq!(info.shown, "host=127.0.0.1 port=5433 user=ann password=*** dbname='my db'");
    // An unquoted space in the password: the rest is no keyword, and is not named.
    for text in ["host=h password=Sekr1t Xy9", "host=h password=Sekr1t Xy9=1", "host=h password='Sekr1t Xy9"] {
        let r = refused(text);
        let said = format!("{}: {}", r.shown, r.why);
        assert!(!said.contains("Sekr1t") && !said.contains("Xy9"), "{said}");
    }
}

#[test]
fn keys_that_are_not_read_are_refused_and_named_only_when_they_are_libpq_keywords() {
    let r = refused("postgres://h/d?Sekr1tkey=1");
    assert!(!r.why.contains("Sekr1tkey") && r.why.contains("a parameter is no libpq keyword"), "{}", r.why);
    assert_eq!(refused("host=h sslpassword=Xy9").why, "trajan does not read sslpassword");
    assert!(refused("postgres://h/d?ssl%mode=1").why.contains("'%'"), "an invalid escape");
    assert!(refused("postgres://h/d%00").why.contains("%00"));
    // JDBC's `ssl=true`, several hosts, an IPv6 address.
    let info = read("postgres://u@127.0.0.1:5432,[::1]:5433/d?ssl=true");
    assert_eq!(
        pairs(&info),
        [("user", "u"), ("host", "127.0.0.1,::1"), ("port", "5432,5433"), ("dbname", "d"), ("sslmode", "require")]
    );
}

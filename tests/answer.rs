use meetcite::{parse_answer, AnswerError};

#[test]
fn fences_prose_and_source_forms() {
    let a = "Sure! Here is the answer:\n```json\n{\"claims\":[{\"text\":\"A\",\"source\":\"S2\",\"quote\":\"q\"},{\"text\":\"B\",\"source\":\"[S3]\",\"quote\":\"q\"},{\"text\":\"C\",\"source\":\" s1 \",\"quote\":\"q\"}]}\n```\nHope this helps {not json}.";
    let p = parse_answer(a).unwrap();
    assert_eq!(p.claims.iter().map(|c| c.source).collect::<Vec<_>>(), vec![2, 3, 1]);
    assert!(p.errors.is_empty());
    let plain = parse_answer("The answer is {\"claims\": []} and that is all").unwrap();
    assert!(plain.claims.is_empty());
}

#[test]
fn one_bad_claim_does_not_lose_the_others() {
    let a = r#"{"claims":[{"text":"ok","source":"S1","quote":"q"},{"text":"bad source","source":"Source 2","quote":"q"},{"text":5,"source":"S1","quote":"q"},{"text":"no quote","source":"S1"},"string claim",{"text":"zero","source":"S0","quote":"q"},{"text":"int","source":2,"quote":"q"},{"text":"last","source":"S4","quote":"q"}]}"#;
    let p = parse_answer(a).unwrap();
    assert_eq!(p.claims.iter().map(|c| c.index).collect::<Vec<_>>(), vec![0, 7]);
    let fields: Vec<(usize, &str)> = p.errors.iter().map(|e| (e.index, e.field.as_str())).collect();
    assert_eq!(fields, vec![(1, "source"), (2, "text"), (3, "quote"), (4, ""), (5, "source"), (6, "source")]);
    assert!(p.errors[2].problem.contains("missing"));
    assert!(p.errors[5].problem.contains("expected a string, found the number 2"));
    assert_eq!(p.errors[0].text.as_deref(), Some("bad source"));
}

#[test]
fn whole_answer_errors_are_typed_and_located() {
    assert_eq!(parse_answer("I could not find anything.").unwrap_err(), AnswerError::NoJson);
    match parse_answer("Here:\n{\"claims\": [ {\"text\": \"a\", }").unwrap_err() {
        AnswerError::Malformed { line, .. } => assert_eq!(line, 2),
        e => panic!("{e:?}"),
    }
    assert_eq!(parse_answer("{\"answer\": 1}").unwrap_err().code(), "missing_claims");
    assert_eq!(parse_answer("{\"claims\": {}}").unwrap_err().code(), "claims_not_array");
    let deep = format!("{}{}", "{\"a\":[".repeat(5000), "]}".repeat(5000));
    assert!(parse_answer(&deep).is_err());
    let truncated = "{\"claims\":[{\"text\":\"a\",\"source\":\"S1\",\"quo";
    assert_eq!(parse_answer(truncated).unwrap_err().code(), "malformed_json");
}

#[test]
fn ten_thousand_claims() {
    let claims: Vec<String> = (0..10_000).map(|i| format!("{{\"text\":\"c{i}\",\"source\":\"S1\",\"quote\":\"q\"}}")).collect();
    let p = parse_answer(&format!("{{\"claims\":[{}]}}", claims.join(","))).unwrap();
    assert_eq!(p.claims.len(), 10_000);
    let more: Vec<String> = (0..10_001).map(|_| "{}".to_string()).collect();
    assert_eq!(parse_answer(&format!("{{\"claims\":[{}]}}", more.join(","))).unwrap_err().code(), "too_large");
}

//! The transport command a user gives (`-e`, `FASTSUM_RSH`), split into
//! words as rsync splits its `-e`.

/// A transport command as `-e` / `FASTSUM_RSH` give it (`ssh -p 2222`):
/// words split at white space, as rsync splits `-e`, where single quotes
/// keep text whole, double quotes too (a backslash escapes `"` and `\`
/// in them), and a backslash outside quotes escapes the next character.
pub(super) fn split_command(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\')) => w.push(n),
                            Some(n) => {
                                w.push('\\');
                                w.push(n);
                            }
                            None => w.push('\\'),
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.next());
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_commands_split_as_rsync_splits_them() {
        assert_eq!(split_command("ssh -p 2222"), ["ssh", "-p", "2222"]);
        assert_eq!(
            split_command(r#"ssh -o 'ProxyCommand nc %h %p' -i "my key" a\ b ''"#),
            [
                "ssh",
                "-o",
                "ProxyCommand nc %h %p",
                "-i",
                "my key",
                "a b",
                ""
            ]
        );
        assert_eq!(split_command(r#"x "a\"b\\c\d""#), ["x", r#"a"b\c\d"#]);
        assert!(split_command("  ").is_empty());
    }
}

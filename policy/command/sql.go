package command

import "strings"

// sqlDialect selects the lexical rules of the SQL being inspected: they
// differ in what starts a comment, and a scanner that disagrees with the
// server about where a comment or string ends could miss a statement.
type sqlDialect uint8

const (
	sqlMySQL sqlDialect = iota
	sqlPostgres
	sqlSQLite
)

// sqlStartWords may begin a read-only statement.
var sqlStartWords = map[string]bool{
	"SELECT": true, "SHOW": true, "EXPLAIN": true, "DESCRIBE": true, "DESC": true,
	"WITH": true, "PRAGMA": true,
}

// sqlWriteWords make a statement write-or-unknown wherever they appear.
var sqlWriteWords = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true,
	"DROP": true, "TRUNCATE": true, "ALTER": true, "CREATE": true, "GRANT": true,
	"REVOKE": true, "RENAME": true, "INTO": true, "OUTFILE": true, "DUMPFILE": true,
	"CALL": true, "DO": true, "LOCK": true, "UNLOCK": true, "COPY": true, "LOAD": true,
	"HANDLER": true, "VACUUM": true, "REINDEX": true, "CLUSTER": true, "REFRESH": true,
	"NOTIFY": true, "LISTEN": true, "PREPARE": true, "EXECUTE": true, "DEALLOCATE": true,
	"COMMIT": true, "ROLLBACK": true, "SAVEPOINT": true, "KILL": true, "FLUSH": true,
	"RESET": true, "PURGE": true, "INSTALL": true, "UNINSTALL": true, "SHUTDOWN": true,
	"OPTIMIZE": true, "REPAIR": true, "ATTACH": true, "DETACH": true, "CHECKPOINT": true,
	"IMPORT": true, "DISCARD": true, "COMMENT": true, "SECURITY": true, "IMMEDIATE": true,
}

// sqlHighWords are write statements graded high risk.
var sqlHighWords = map[string]bool{"DROP": true, "TRUNCATE": true, "DELETE": true, "ALTER": true, "SHUTDOWN": true}

// sqlParenWords are keywords that may be followed by "(" without being a
// function call.
var sqlParenWords = map[string]bool{
	"IN": true, "EXISTS": true, "VALUES": true, "ANY": true, "ALL": true, "SOME": true,
	"OVER": true, "FILTER": true, "AS": true, "FROM": true, "JOIN": true, "ON": true,
	"WHERE": true, "AND": true, "OR": true, "NOT": true, "SELECT": true, "USING": true,
	"WITHIN": true, "BY": true, "WHEN": true, "THEN": true, "ELSE": true, "CASE": true,
	"BETWEEN": true, "LIKE": true, "ILIKE": true, "IS": true, "HAVING": true, "UNION": true,
	"INTERSECT": true, "EXCEPT": true, "LATERAL": true, "ROW": true, "ARRAY": true,
	"CAST": true, "INTERVAL": true, "DISTINCT": true, "EXPLAIN": true, "ANALYZE": true,
	"WITH": true, "RECURSIVE": true, "MATERIALIZED": true, "OF": true, "ORDER": true,
	"PARTITION": true, "LIMIT": true, "OFFSET": true, "INNER": true, "OUTER": true,
	"CROSS": true, "FULL": true, "NATURAL": true, "ASC": true, "DESC": true, "COUNT": true,
	"EXTRACT": true, "SUBSTRING": true, "POSITION": true, "TRIM": true, "CONVERT": true,
	"GROUP": true, "WINDOW": true, "RETURNS": true, "NULLIF": true, "COALESCE": true,
}

// sqlReadFunctions are functions known not to change anything. A call to
// any other function (user-defined ones included) is unknown: functions
// such as nextval(), pg_terminate_backend() or a custom cleanup() write.
var sqlReadFunctions = wordSet(`count sum avg min max now current_timestamp current_date
		current_time version current_database current_schema current_user session_user user
		database schema coalesce nullif greatest least concat concat_ws length char_length
		character_length octet_length lower upper substring substr trim ltrim rtrim replace
		round floor ceil ceiling abs mod power pow sqrt cast convert extract date_trunc
		date_part to_char to_date to_timestamp to_number age date time datetime strftime
		julianday unixepoch date_format from_unixtime unix_timestamp timestampdiff
		timestampadd datediff date_add date_sub adddate subdate curdate curtime sysdate
		utc_timestamp ifnull isnull if iif nvl string_agg array_agg group_concat json_agg
		jsonb_agg json_build_object jsonb_build_object json_object json_extract json_array
		to_json to_jsonb row_to_json json_object_agg row_number rank dense_rank percent_rank
		cume_dist lag lead first_value last_value nth_value ntile percentile_cont
		percentile_disc stddev stddev_pop stddev_samp variance var_pop var_samp bool_and
		bool_or every array_length array_to_string string_to_array unnest cardinality
		generate_series split_part regexp_replace regexp_matches regexp_match
		regexp_substr regexp_like position strpos left right lpad rpad format md5 hex
		unhex typeof pg_typeof pg_size_pretty pg_database_size pg_relation_size
		pg_total_relation_size pg_table_size pg_indexes_size pg_tablespace_size
		pg_column_size pg_size_bytes pg_is_in_recovery pg_last_xact_replay_timestamp
		pg_last_wal_receive_lsn pg_last_wal_replay_lsn pg_current_wal_lsn
		pg_current_wal_insert_lsn pg_wal_lsn_diff pg_postmaster_start_time
		pg_conf_load_time pg_backend_pid pg_blocking_pids pg_get_userbyid pg_get_viewdef
		pg_get_indexdef pg_get_constraintdef pg_get_triggerdef pg_encoding_to_char
		pg_relation_filenode pg_relation_filepath pg_is_wal_replay_paused
		pg_stat_get_activity pg_stat_get_backend_pid pg_tablespace_location
		pg_get_serial_sequence pg_has_role has_table_privilege has_database_privilege
		has_schema_privilege obj_description col_description format_type to_regclass
		quote_ident quote_literal inet_server_addr inet_server_port inet_client_addr
		current_setting clock_timestamp statement_timestamp transaction_timestamp
		timezone pg_sleep sleep found_rows row_count connection_id char ascii ord instr
		locate field elt bin oct conv sec_to_time time_to_sec changes total_changes
		last_insert_rowid sqlite_version sqlite_source_id random likelihood printf quote
		unicode soundex sign trunc truncate exp ln log log10 log2 pi total any_value
		bit_and bit_or bit_xor json_each json_tree json_valid json_type json_group_array
		json_group_object json_array_length json_extract_path json_extract_path_text
		jsonb_extract_path jsonb_extract_path_text jsonb_array_length jsonb_pretty
		jsonb_typeof json_typeof json_keys json_length json_unquote json_contains
		json_pretty array_position array_remove array_upper array_lower inet_ntoa
		inet_aton inet6_ntoa is_ipv4 is_ipv6 uuid_to_bin bin_to_uuid lcase ucase
		dayofweek dayofmonth dayofyear weekday week year month day hour minute second
		microsecond quarter monthname dayname last_day makedate maketime str_to_date
		to_days from_days period_diff localtime localtimestamp epoch date_bin
		make_interval justify_interval justify_days justify_hours isfinite
		pg_postmaster_start_time pg_stat_statements coalesce exists mode median
		count_big nvl2 decode initcap reverse repeat space translate btrim
		char_length bit_length octet_length overlay starts_with ends_with`)

// wordSet builds a set from space-separated words.
func wordSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// sqlReadPragmas are SQLite pragmas that only report. With an argument in
// parentheses only the table-describing ones stay read-only; "=" always
// sets.
var sqlReadPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true, "database_list": true,
	"compile_options": true, "page_count": true, "page_size": true, "freelist_count": true,
	"journal_mode": true, "user_version": true, "schema_version": true,
	"application_id": true, "encoding": true, "auto_vacuum": true, "cache_size": true,
	"collation_list": true, "function_list": true, "module_list": true, "pragma_list": true,
	"table_list": true, "data_version": true, "synchronous": true, "foreign_keys": true,
	"busy_timeout": true, "max_page_count": true, "mmap_size": true, "temp_store": true,
	"wal_autocheckpoint": true, "locking_mode": true, "secure_delete": true,
	"recursive_triggers": true,
}

// sqlArgPragmas may take a parenthesised argument and stay read-only.
var sqlArgPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
}

// sqlReadOnly inspects a SQL string: every statement must start with a
// read-only keyword, use no writing keyword, call only known read-only
// functions, and contain nothing the scanner cannot be sure about
// (backslashes, dollar quotes, executable comments). what names the first
// statement's keyword when read-only, or the construct that decided.
func sqlReadOnly(sql string, d sqlDialect) (readOnly bool, what string, risk Risk) {
	if d == sqlMySQL {
		sql = mysqlTerminators(sql)
	}
	if strings.ContainsRune(sql, '\\') {
		return false, "backslash", RiskMedium
	}
	if d == sqlPostgres && strings.ContainsRune(sql, '$') {
		return false, "dollar quoting", RiskMedium
	}
	lx := sqlLexer{s: sql, d: d}
	first := ""
	stmtWord, pragma := "", ""
	statements := 0
	for {
		tok, kind, ok := lx.next()
		if !ok {
			return false, lx.err, RiskMedium
		}
		switch kind {
		case sqlEOF:
			if statements == 0 {
				return false, "empty SQL", RiskMedium
			}
			return true, first, RiskReadOnly
		case sqlSemicolon:
			stmtWord, pragma = "", ""
			continue
		case sqlWord:
			up := strings.ToUpper(tok)
			if stmtWord == "" {
				if !sqlStartWords[up] {
					return false, up, sqlRisk(up)
				}
				stmtWord = up
				statements++
				if first == "" {
					first = up
				}
				continue
			}
			// SHOW only reports, even SHOW CREATE TABLE.
			if stmtWord != "SHOW" && sqlWriteWords[up] {
				return false, up, sqlRisk(up)
			}
			if stmtWord == "PRAGMA" && pragma == "" {
				pragma = strings.ToLower(tok[strings.LastIndexByte(tok, '.')+1:])
				if !sqlReadPragmas[pragma] {
					return false, "PRAGMA " + pragma, RiskMedium
				}
			}
			if lx.peekParen() && !sqlParenWords[up] {
				if stmtWord == "PRAGMA" && strings.EqualFold(tok[strings.LastIndexByte(tok, '.')+1:], pragma) {
					if !sqlArgPragmas[pragma] {
						return false, "PRAGMA " + pragma + "(...)", RiskMedium
					}
					continue
				}
				if !sqlFunctionOK(tok) {
					return false, "function " + tok, RiskMedium
				}
			}
		case sqlQuoted:
			if stmtWord == "" {
				return false, "statement start", RiskMedium
			}
			if lx.peekParen() && tok[0] != '\'' {
				return false, "quoted function " + tok, RiskMedium
			}
		case sqlOther:
			if stmtWord == "" {
				if tok == "(" {
					continue // "(SELECT ...) UNION ..."
				}
				return false, "statement start", RiskMedium
			}
			if stmtWord == "PRAGMA" && tok == "=" {
				return false, "PRAGMA " + pragma + " =", RiskMedium
			}
		}
	}
}

// mysqlTerminators turns the mysql client's \G and \g statement
// terminators into semicolons, so that "SHOW SLAVE STATUS\G" can be
// inspected; any other backslash is left for the caller to refuse.
func mysqlTerminators(sql string) string {
	if !strings.Contains(sql, "\\G") && !strings.Contains(sql, "\\g") {
		return sql
	}
	b := []byte(sql)
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\\' && (b[i+1] == 'G' || b[i+1] == 'g') && (i+2 == len(b) || strings.IndexByte(" \t\n\r;", b[i+2]) >= 0) {
			b[i], b[i+1] = ';', ' '
		}
	}
	return string(b)
}

func sqlRisk(word string) Risk {
	if sqlHighWords[word] {
		return RiskHigh
	}
	return RiskMedium
}

// sqlFunctionOK reports whether a (possibly schema-qualified) function is
// known to be read-only.
func sqlFunctionOK(name string) bool {
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		schema := strings.ToLower(name[:dot])
		if schema != "pg_catalog" && schema != "information_schema" {
			return false
		}
		name = name[dot+1:]
	}
	return sqlReadFunctions[strings.ToLower(name)]
}

// sqlTokKind is the kind of one SQL token.
type sqlTokKind uint8

const (
	sqlEOF sqlTokKind = iota
	sqlWord
	sqlQuoted
	sqlSemicolon
	sqlOther
)

// sqlLexer splits SQL into words, quoted tokens, semicolons and other
// characters, skipping comments by the dialect's rules.
type sqlLexer struct {
	s   string
	i   int
	d   sqlDialect
	err string
}

func (lx *sqlLexer) next() (tok string, kind sqlTokKind, ok bool) {
	for lx.i < len(lx.s) {
		ch := lx.s[lx.i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f':
			lx.i++
		case ch == '-' && strings.HasPrefix(lx.s[lx.i:], "--"):
			// MySQL needs whitespace (or the end) after "--".
			if lx.d == sqlMySQL && lx.i+2 < len(lx.s) && strings.IndexByte(" \t\n\r", lx.s[lx.i+2]) < 0 {
				lx.i++
				return "-", sqlOther, true
			}
			lx.skipLine()
		case ch == '#' && lx.d == sqlMySQL:
			lx.skipLine()
		case ch == '/' && strings.HasPrefix(lx.s[lx.i:], "/*"):
			end := strings.Index(lx.s[lx.i+2:], "*/")
			if end < 0 {
				lx.err = "unterminated comment"
				return "", 0, false
			}
			body := lx.s[lx.i+2 : lx.i+2+end]
			if strings.HasPrefix(body, "!") || strings.HasPrefix(body, "M!") || strings.Contains(body, "/*") {
				lx.err = "executable or nested comment"
				return "", 0, false
			}
			lx.i += end + 4
		case ch == '\'' || ch == '"' || ch == '`':
			start := lx.i
			for j := lx.i + 1; ; j++ {
				if j >= len(lx.s) {
					lx.err = "unterminated quote"
					return "", 0, false
				}
				if lx.s[j] == ch {
					if j+1 < len(lx.s) && lx.s[j+1] == ch {
						j++
						continue
					}
					lx.i = j + 1
					return lx.s[start:lx.i], sqlQuoted, true
				}
			}
		case ch == ';':
			lx.i++
			return ";", sqlSemicolon, true
		case ch >= 0x80:
			lx.err = "non-ASCII outside quotes"
			return "", 0, false
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			start := lx.i
			for lx.i < len(lx.s) {
				c := lx.s[lx.i]
				if c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
					lx.i++
					continue
				}
				break
			}
			return lx.s[start:lx.i], sqlWord, true
		default:
			lx.i++
			return lx.s[lx.i-1 : lx.i], sqlOther, true
		}
	}
	return "", sqlEOF, true
}

// peekParen reports whether the next significant character is "(".
func (lx *sqlLexer) peekParen() bool {
	for j := lx.i; j < len(lx.s); j++ {
		switch lx.s[j] {
		case ' ', '\t', '\n', '\r':
			continue
		case '(':
			return true
		}
		return false
	}
	return false
}

func (lx *sqlLexer) skipLine() {
	for lx.i < len(lx.s) && lx.s[lx.i] != '\n' {
		lx.i++
	}
}

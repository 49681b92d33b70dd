package sqlcheck

// pgKeywords are every keyword of PostgreSQL 17's grammar, of all four
// kinds (reserved, unreserved, column-name and type-or-function-name). The
// quick path (pgQuick) takes a word as a plain name only if it is none of
// them, so that a word the grammar treats specially always goes to the
// parser. TestPgKeywordsMatchGrammar compares the list with kwlist.h of the
// libpg_query sources the parser is built from.
var pgKeywords = wordSet(`
	abort absent absolute access action add admin after aggregate all also alter always analyse
	analyze and any array as asc asensitive assertion assignment asymmetric at atomic attach
	attribute authorization backward before begin between bigint binary bit boolean both breadth
	by cache call called cascade cascaded case cast catalog chain char character characteristics
	check checkpoint class close cluster coalesce collate collation column columns comment
	comments commit committed compression concurrently conditional configuration conflict
	connection constraint constraints content continue conversion copy cost create cross
	csv cube current current_catalog current_date current_role current_schema current_time
	current_timestamp current_user cursor cycle data database day deallocate dec decimal
	declare default defaults deferrable deferred definer delete delimiter delimiters depends
	depth desc detach dictionary disable discard distinct do document domain double drop each
	else empty enable encoding encrypted end enum error escape event except exclude excluding
	exclusive execute exists explain expression extension external extract false family fetch
	filter finalize first float following for force foreign format forward freeze from full
	function functions generated global grant granted greatest group grouping groups handler
	having header hold hour identity if ilike immediate immutable implicit import in include
	including increment indent index indexes inherit inherits initially inline inner inout input
	insensitive insert instead int integer intersect interval into invoker is isnull isolation join
	json json_array json_arrayagg json_exists json_object json_objectagg json_query json_scalar
	json_serialize json_table json_value keep key keys label language large last lateral leading
	leakproof least left level like limit listen load local localtime localtimestamp location
	lock locked logged mapping match matched materialized maxvalue merge merge_action method
	minute minvalue mode month move name names national natural nchar nested new next nfc
	nfd nfkc nfkd no none normalize normalized not nothing notify notnull nowait null nullif
	nulls numeric object of off offset oids old omit on only operator option options or order
	ordinality others out outer over overlaps overlay overriding owned owner parallel parameter
	parser partial partition passing password path placing plan plans policy position preceding
	precision prepare prepared preserve primary prior privileges procedural procedure procedures
	program publication quote quotes range read real reassign recheck recursive ref references
	referencing refresh reindex relative release rename repeatable replace replica reset restart
	restrict return returning returns revoke right role rollback rollup routine routines row
	rows rule savepoint scalar schema schemas scroll search second security select sequence
	sequences serializable server session session_user set setof sets share show similar simple
	skip smallint snapshot some source sql stable standalone start statement statistics stdin
	stdout storage stored strict string strip subscription substring support symmetric sysid
	system system_user table tables tablesample tablespace target temp template temporary text
	then ties time timestamp to trailing transaction transform treat trigger trim true truncate
	trusted type types uescape unbounded uncommitted unconditional unencrypted union unique
	unknown unlisten unlogged until update user using vacuum valid validate validator value
	values varchar variadic varying verbose version view views volatile when where whitespace
	window with within without work wrapper write xml xmlattributes xmlconcat xmlelement
	xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable year yes zone`)

// pgUnreserved are the keywords of pgKeywords that the grammar also takes
// as the name of a column, table, function or setting (ColId): name, type,
// value, admin. The quick path takes them as names there, but never as an
// alias written without AS, where many of them continue the expression.
var pgUnreserved = wordSet(`
	abort absent absolute access action add admin after aggregate also alter always asensitive
	assertion assignment at atomic attach attribute backward before begin breadth by cache
	call called cascade cascaded catalog chain characteristics checkpoint class close cluster
	columns comment comments commit committed compression conditional configuration conflict
	connection constraints content continue conversion copy cost csv cube current cursor
	cycle data database day deallocate declare defaults deferred definer delete delimiter
	delimiters depends depth detach dictionary disable discard document domain double drop
	each empty enable encoding encrypted enum error escape event exclude excluding exclusive
	execute explain expression extension external family filter finalize first following force
	format forward function functions generated global granted groups handler header hold hour
	identity if immediate immutable implicit import include including increment indent index
	indexes inherit inherits inline input insensitive insert instead invoker isolation keep
	key keys label language large last leakproof level listen load local location lock locked
	logged mapping match matched materialized maxvalue merge method minute minvalue mode month
	move name names nested new next nfc nfd nfkc nfkd no normalized nothing notify nowait nulls
	object of off oids old omit operator option options ordinality others over overriding owned
	owner parallel parameter parser partial partition passing password path plan plans policy
	preceding prepare prepared preserve prior privileges procedural procedure procedures program
	publication quote quotes range read reassign recheck recursive ref referencing refresh
	reindex relative release rename repeatable replace replica reset restart restrict return
	returns revoke role rollback rollup routine routines rows rule savepoint scalar schema
	schemas scroll search second security sequence sequences serializable server session set
	sets share show simple skip snapshot source sql stable standalone start statement statistics
	stdin stdout storage stored strict string strip subscription support sysid system tables
	tablespace target temp template temporary text ties transaction transform trigger truncate
	trusted type types uescape unbounded uncommitted unconditional unencrypted unknown unlisten
	unlogged until update vacuum valid validate validator value varying version view views
	volatile whitespace within without work wrapper write xml year yes zone`)

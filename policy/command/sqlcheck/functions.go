package sqlcheck

// The lists below are allowlists built from the function chapters of each
// server's manual. A function is here only if calling it changes nothing:
// no data, no sequence, no lock, no session or server setting, no file, no
// other session, no network. Left out on purpose, in every dialect:
//
//   - writers and state changers: nextval, setval, setseed, set_config,
//     pg_terminate_backend, pg_cancel_backend, pg_reload_conf,
//     pg_rotate_logfile, pg_switch_wal, pg_promote, pg_stat_reset*, the
//     advisory locks, lo_* (large objects), txid_current and
//     pg_current_xact_id (they assign a transaction id), pg_notify, MySQL's
//     GET_LOCK/RELEASE_LOCK, LAST_INSERT_ID(expr), SQLite's writefile, edit,
//     load_extension;
//   - functions that run SQL given as text: query_to_xml and friends,
//     cursor_to_xml, ts_stat, ts_rewrite (its second form runs a SELECT
//     given as text), dblink*, sha3_query; the *_to_xml exporters of whole
//     tables, schemas and databases;
//   - waits: pg_sleep*, SLEEP, BENCHMARK, MASTER_POS_WAIT and the GTID
//     waits: a read must end promptly, and a model has no diagnostic reason
//     to stall a server connection;
//   - readers of files outside the database: pg_read_file,
//     pg_read_binary_file, pg_stat_file, pg_ls_dir, LOAD_FILE, readfile,
//     fsdir. They change nothing, but they run as the database server's
//     operating-system user, reach past what SQL privileges show, and block
//     forever on a FIFO; a person should approve them.
//
// Names are matched case-insensitively (PostgreSQL folds unquoted names;
// MySQL and SQLite function names are case-insensitive).

// pgReadFunctions are PostgreSQL functions without side effects, callable
// unqualified or as pg_catalog.name.
var pgReadFunctions = wordSet(`
	abs cbrt ceil ceiling degrees div erf erfc exp factorial floor gcd lcm ln log log10
	min_scale mod pi power radians round scale sign sqrt trim_scale trunc width_bucket
	random random_normal acos acosd asin asind atan atand atan2 atan2d cos cosd cot cotd sin
	sind tan tand sinh cosh tanh asinh acosh atanh gamma lgamma
	ascii bit_length btrim char_length character_length chr concat concat_ws format initcap
	casefold left length lower lpad ltrim md5 normalize is_normalized octet_length overlay
	parse_ident position quote_ident quote_literal quote_nullable regexp_count regexp_instr
	regexp_like regexp_match regexp_matches regexp_replace regexp_split_to_array
	regexp_split_to_table regexp_substr repeat replace reverse right rpad rtrim split_part
	starts_with string_to_array string_to_table strpos substr substring to_ascii to_bin to_hex
	to_oct translate unistr upper unicode_assigned similar_to_escape
	bit_count get_bit get_byte set_bit set_byte sha224 sha256 sha384 sha512 convert
	convert_from convert_to decode encode crc32 crc32c
	to_char to_date to_number to_timestamp
	age clock_timestamp current_date current_time current_timestamp date_add date_bin
	date_part date_subtract date_trunc extract isfinite justify_days justify_hours
	justify_interval localtime localtimestamp make_date make_interval make_time
	make_timestamp make_timestamptz now statement_timestamp timeofday transaction_timestamp
	timezone overlaps
	enum_first enum_last enum_range
	area center diagonal diameter height isclosed isopen npoints pclose popen radius slope
	width box bound_box circle line lseg path point polygon
	abbrev broadcast family host hostmask inet_merge inet_same_family masklen netmask network
	set_masklen text macaddr8_set7bit
	array_to_tsvector get_current_ts_config numnode plainto_tsquery phraseto_tsquery
	websearch_to_tsquery querytree setweight strip to_tsquery to_tsvector json_to_tsvector
	jsonb_to_tsvector ts_delete ts_filter ts_headline ts_rank ts_rank_cd
	tsquery_phrase tsvector_to_array ts_debug ts_lexize ts_parse ts_token_type
	gen_random_uuid uuidv4 uuidv7 uuid_extract_timestamp uuid_extract_version
	xmlcomment xmlconcat xmlelement xmlforest xmlpi xmlroot xmlagg xmlexists
	xml_is_well_formed xml_is_well_formed_document xml_is_well_formed_content xpath
	xpath_exists xmltable
	to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array
	json_build_object jsonb_build_object json_object jsonb_object json_array_elements
	jsonb_array_elements json_array_elements_text jsonb_array_elements_text json_array_length
	jsonb_array_length json_each jsonb_each json_each_text jsonb_each_text json_extract_path
	jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_object_keys
	jsonb_object_keys json_populate_record jsonb_populate_record jsonb_populate_record_valid
	json_populate_recordset jsonb_populate_recordset json_to_record jsonb_to_record
	json_to_recordset jsonb_to_recordset json_strip_nulls jsonb_strip_nulls jsonb_set
	jsonb_set_lax jsonb_insert jsonb_path_exists jsonb_path_match jsonb_path_query
	jsonb_path_query_array jsonb_path_query_first jsonb_path_exists_tz jsonb_path_match_tz
	jsonb_path_query_tz jsonb_path_query_array_tz jsonb_path_query_first_tz jsonb_pretty
	json_typeof jsonb_typeof json_agg jsonb_agg json_agg_strict jsonb_agg_strict
	json_object_agg jsonb_object_agg json_object_agg_strict jsonb_object_agg_strict
	json_object_agg_unique jsonb_object_agg_unique json_object_agg_unique_strict
	jsonb_object_agg_unique_strict json_scalar json_serialize
	currval lastval
	coalesce nullif greatest least num_nulls num_nonnulls
	array_append array_cat array_dims array_fill array_length array_lower array_ndims
	array_position array_positions array_prepend array_remove array_replace array_reverse
	array_sample array_shuffle array_sort array_to_string array_upper cardinality trim_array
	unnest generate_series generate_subscripts
	lower_inc upper_inc lower_inf upper_inf isempty range_merge multirange unnest
	int4range int8range numrange tsrange tstzrange daterange int4multirange int8multirange
	nummultirange tsmultirange tstzmultirange datemultirange
	any_value array_agg avg bit_and bit_or bit_xor bool_and bool_or count every max min
	range_agg range_intersect_agg string_agg sum corr covar_pop covar_samp regr_avgx
	regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev
	stddev_pop stddev_samp variance var_pop var_samp mode percentile_cont percentile_disc
	rank dense_rank percent_rank cume_dist grouping
	row_number ntile lag lead first_value last_value nth_value
	current_catalog current_database current_query current_role current_schema
	current_schemas current_user inet_client_addr inet_client_port inet_server_addr
	inet_server_port pg_backend_pid pg_blocking_pids pg_conf_load_time pg_current_logfile
	pg_get_loaded_modules pg_my_temp_schema pg_is_other_temp_schema pg_jit_available
	pg_listening_channels pg_notification_queue_usage pg_postmaster_start_time
	pg_safe_snapshot_blocking_pids pg_trigger_depth session_user system_user user version
	has_any_column_privilege has_column_privilege has_database_privilege
	has_foreign_data_wrapper_privilege has_function_privilege has_language_privilege
	has_largeobject_privilege has_parameter_privilege has_schema_privilege
	has_sequence_privilege has_server_privilege has_table_privilege has_tablespace_privilege
	has_type_privilege pg_has_role row_security_active acldefault aclexplode makeaclitem
	pg_collation_is_visible pg_conversion_is_visible pg_function_is_visible
	pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible
	pg_statistics_obj_is_visible pg_table_is_visible pg_ts_config_is_visible
	pg_ts_dict_is_visible pg_ts_parser_is_visible pg_ts_template_is_visible
	pg_type_is_visible format_type pg_basetype pg_char_to_encoding pg_encoding_to_char
	pg_get_catalog_foreign_keys pg_get_constraintdef pg_get_expr pg_get_functiondef
	pg_get_function_arguments pg_get_function_identity_arguments pg_get_function_result
	pg_get_indexdef pg_get_keywords pg_get_partkeydef pg_get_ruledef pg_get_serial_sequence
	pg_get_statisticsobjdef pg_get_triggerdef pg_get_userbyid pg_get_viewdef
	pg_index_column_has_property pg_index_has_property pg_indexam_has_property
	pg_options_to_table pg_settings_get_flags pg_tablespace_databases pg_tablespace_location
	pg_typeof to_regclass to_regcollation to_regnamespace to_regoper to_regoperator
	to_regproc to_regprocedure to_regrole to_regtype to_regtypemod pg_describe_object
	pg_identify_object pg_identify_object_as_address pg_get_object_address col_description
	obj_description shobj_description pg_input_is_valid pg_input_error_info
	pg_current_xact_id_if_assigned pg_current_snapshot pg_snapshot_xip pg_snapshot_xmax
	pg_snapshot_xmin pg_visible_in_snapshot pg_xact_status txid_current_if_assigned
	txid_current_snapshot txid_snapshot_xip txid_snapshot_xmax txid_snapshot_xmin
	txid_visible_in_snapshot txid_status pg_xact_commit_timestamp
	pg_xact_commit_timestamp_origin pg_last_committed_xact pg_control_checkpoint
	pg_control_system pg_control_init pg_control_recovery pg_available_wal_summaries
	pg_wal_summary_contents pg_get_wal_summarizer_state
	current_setting pg_column_compression pg_column_size pg_column_toast_chunk_id
	pg_database_size pg_indexes_size pg_relation_size pg_size_bytes pg_size_pretty
	pg_table_size pg_tablespace_size pg_total_relation_size pg_relation_filenode
	pg_relation_filepath pg_filenode_relation pg_collation_actual_version
	pg_database_collation_actual_version pg_partition_tree pg_partition_ancestors
	pg_partition_root pg_ls_logdir pg_ls_waldir pg_ls_logicalmapdir pg_ls_logicalsnapdir
	pg_ls_replslotdir pg_ls_archive_statusdir pg_ls_tmpdir pg_ls_summariesdir
	pg_current_wal_flush_lsn pg_current_wal_insert_lsn pg_current_wal_lsn
	pg_walfile_name pg_walfile_name_offset pg_split_walfile_name pg_wal_lsn_diff
	pg_is_in_recovery pg_last_wal_receive_lsn pg_last_wal_replay_lsn
	pg_last_xact_replay_timestamp pg_is_wal_replay_paused pg_get_wal_replay_pause_state
	pg_get_wal_resource_managers pg_stat_get_activity pg_stat_get_backend_pid
	pg_stat_get_backend_dbid pg_stat_get_backend_userid pg_stat_get_backend_activity
	pg_stat_get_backend_activity_start pg_stat_get_backend_client_addr
	pg_stat_get_backend_client_port pg_stat_get_backend_start pg_stat_get_backend_wait_event
	pg_stat_get_backend_wait_event_type pg_stat_get_backend_xact_start
	pg_stat_get_backend_idset pg_stat_get_snapshot_timestamp pg_stat_get_numscans
	pg_stat_get_xact_numscans pg_stat_get_tuples_returned pg_stat_get_tuples_fetched
	pg_stat_get_live_tuples pg_stat_get_dead_tuples pg_stat_get_wal_receiver
	pg_stat_get_replication_slot pg_stat_get_subscription pg_stat_get_io pg_stat_get_wal
	pg_stat_get_archiver pg_stat_get_bgwriter_buf_written_clean
	pg_stat_get_checkpointer_num_timed pg_stat_get_progress_info pg_stat_get_db_numbackends
	pg_stat_statements pg_stat_statements_info pg_get_backend_memory_contexts
	pg_get_shmem_allocations pg_lock_status pg_prepared_xact pg_show_all_settings
	pg_show_all_file_settings pg_hba_file_rules pg_ident_file_mappings pg_timezone_names
	pg_timezone_abbrevs pg_cursor pg_prepared_statement pg_get_replication_slots
	pg_config pg_available_extensions pg_available_extension_versions pg_extension_config_dump
	pg_get_publication_tables pg_relation_is_publishable pg_mcv_list_items
	pg_event_trigger_ddl_commands pg_event_trigger_dropped_objects
	pg_event_trigger_table_rewrite_oid pg_event_trigger_table_rewrite_reason
	pg_sequence_last_value pg_sequence_parameters pg_get_multixact_members
	pg_stat_get_function_calls pg_stat_get_function_total_time pg_stat_get_function_self_time
	pg_tablespace_size pg_relation_is_updatable pg_column_is_updatable
	bool int2 int4 int8 float4 float8 numeric date interval timestamp timestamptz time timetz
	inet cidr macaddr macaddr8 bpchar varchar name regclass oid bytea
	pg_collation_for xmlparse xmlserialize`)

// pgReadTypes are PostgreSQL's built-in types, allowed as cast targets
// and column types of a function's result.
var pgReadTypes = wordSet(`bool boolean int2 int4 int8 smallint integer int bigint float4 float8
	real numeric decimal money text varchar bpchar char character name bytea date time timetz
	timestamp timestamptz interval json jsonb jsonpath uuid inet cidr macaddr macaddr8 bit
	varbit oid regclass regtype regproc regprocedure regoper regoperator regnamespace regrole
	regconfig regdictionary regcollation xid xid8 cid tid pg_lsn point line lseg box path
	polygon circle tsvector tsquery xml int4range int8range numrange tsrange tstzrange
	daterange int4multirange int8multirange nummultirange tsmultirange tstzmultirange
	datemultirange record pg_snapshot txid_snapshot aclitem unknown anyelement`)

// mysqlReadFunctions are MySQL and MariaDB functions without side effects.
var mysqlReadFunctions = wordSet(`
	abs acos asin atan atan2 ceil ceiling conv cos cot crc32 degrees div exp floor ln log log10
	log2 mod pi pow power radians rand round sign sin sqrt tan truncate
	ascii bin bit_length char char_length character_length concat concat_ws elt export_set
	field find_in_set format from_base64 hex insert instr lcase left length like locate lower
	lpad ltrim make_set match mid oct octet_length ord position quote regexp regexp_instr
	regexp_like regexp_replace regexp_substr repeat replace reverse right rlike rpad rtrim
	soundex space strcmp substr substring substring_index to_base64 trim ucase unhex upper
	weight_string natural_sort_key sformat
	adddate addtime convert_tz curdate current_date current_time current_timestamp curtime
	date date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear
	extract from_days from_unixtime get_format hour last_day localtime localtimestamp makedate
	maketime microsecond minute month monthname now period_add period_diff quarter
	sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec
	timediff timestamp timestampadd timestampdiff to_days to_seconds unix_timestamp
	utc_date utc_time utc_timestamp week weekday weekofyear year yearweek add_months
	months_between
	bit_count aes_decrypt aes_encrypt compress md5 random_bytes sha sha1 sha2
	statement_digest statement_digest_text uncompress uncompressed_length
	validate_password_strength
	charset coercibility collation connection_id current_role current_user database
	found_rows icu_version roles_graphml row_count schema session_user system_user user
	version
	json_array json_array_append json_array_insert json_contains json_contains_path
	json_depth json_extract json_insert json_keys json_length json_merge json_merge_patch
	json_merge_preserve json_object json_overlaps json_pretty json_quote json_remove
	json_replace json_schema_valid json_schema_validation_report json_search json_set
	json_storage_free json_storage_size json_table json_type json_unquote json_valid
	json_value member_of json_arrayagg json_objectagg json_detailed json_loose
	json_compact json_exists json_query json_equals json_normalize json_array_intersect
	json_object_filter_keys json_object_to_array json_key_value
	any_value bin_to_uuid default grouping inet_aton inet_ntoa inet6_aton inet6_ntoa
	is_ipv4 is_ipv4_compat is_ipv4_mapped is_ipv6 is_uuid name_const uuid uuid_short
	uuid_to_bin values sys_guid
	avg bit_and bit_or bit_xor count group_concat max min std stddev stddev_pop stddev_samp
	sum var_pop var_samp variance
	cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank
	row_number percentile_cont percentile_disc median
	coalesce greatest least if ifnull isnull interval nullif nvl nvl2 decode decode_oracle
	cast convert binary
	is_free_lock is_used_lock
	format_bytes format_pico_time ps_current_thread_id ps_thread_id
	gtid_subset gtid_subtract
	column_check column_create column_exists column_get column_json column_list
	st_area st_asbinary st_asgeojson st_astext st_aswkb st_aswkt st_buffer st_centroid
	st_contains st_convexhull st_crosses st_difference st_dimension st_disjoint st_distance
	st_distance_sphere st_endpoint st_envelope st_equals st_exteriorring st_geomfromgeojson
	st_geomfromtext st_geomfromwkb st_geometryn st_geometrytype st_intersection
	st_intersects st_isclosed st_isempty st_isvalid st_latitude st_length st_longitude
	st_numgeometries st_numpoints st_overlaps st_pointn st_srid st_startpoint st_touches
	st_union st_within st_x st_y point linestring polygon mbrcontains mbrwithin
	mbrintersects mbroverlaps mbrtouches mbrdisjoint mbrequals`)

// mysqlNoArgFunctions are read-only only when called without arguments:
// LAST_INSERT_ID(expr) sets the value it later returns.
var mysqlNoArgFunctions = wordSet(`last_insert_id`)

// sqliteReadFunctions are SQLite functions without side effects: the core,
// date and time, aggregate, window, math and JSON functions, the
// table-valued functions json_each, json_tree and generate_series, the
// read-only PRAGMA functions, and the sqlite3 shell's pure helpers.
var sqliteReadFunctions = wordSet(`
	abs changes char coalesce concat concat_ws format glob hex ifnull iif if instr
	last_insert_rowid length like likelihood likely lower ltrim max min nullif octet_length
	printf quote random randomblob replace round rtrim sign soundex
	sqlite_compileoption_get sqlite_compileoption_used sqlite_offset sqlite_source_id
	sqlite_version substr substring total_changes trim typeof unhex unicode unistr
	unistr_quote unlikely upper zeroblob
	date time datetime julianday unixepoch strftime timediff
	avg count group_concat string_agg sum total median percentile percentile_cont
	percentile_disc
	row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
	nth_value
	acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log
	log10 log2 mod pi pow power radians sin sinh sqrt tan tanh trunc
	json jsonb json_array jsonb_array json_array_length json_error_position json_extract
	jsonb_extract json_insert jsonb_insert json_object jsonb_object json_patch jsonb_patch
	json_pretty json_remove jsonb_remove json_replace jsonb_replace json_set jsonb_set
	json_type json_valid json_quote json_group_array jsonb_group_array json_group_object
	jsonb_group_object json_each jsonb_each json_tree jsonb_tree
	generate_series
	pragma_table_info pragma_table_xinfo pragma_table_list pragma_index_list
	pragma_index_info pragma_index_xinfo pragma_foreign_key_list pragma_database_list
	pragma_collation_list pragma_function_list pragma_module_list pragma_pragma_list
	pragma_compile_options
	regexp sha3 decimal decimal_add decimal_cmp decimal_mul decimal_sub decimal_sum
	ieee754 ieee754_mantissa ieee754_exponent ieee754_from_blob ieee754_to_blob base64
	base85 sqlar_uncompress shell_escape_crnl shell_idquote shell_int32 shell_add_schema
	shell_module_schema`)

package command

import "strings"

// The cloud CLIs' read-only commands, listed one by one from the
// services' API references: an operation's name is no proof (get-* can
// create or send: cognito-identity get-id creates an identity, redshift
// get-cluster-credentials creates a database user, ec2 get-password-data
// and secretsmanager get-secret-value reveal secrets, ecr
// get-login-password issues a credential; sqs receive-message hides the
// messages it returns). What is not listed needs approval.

// awsStreaming are the operations whose response is a stream the CLI
// writes to a file named by a positional argument (the API models'
// streaming outputs); their other words cannot be told from that file.
var awsStreaming = wordSet(`get-object get-object-torrent get-job-output get-media get-clip
	get-media-for-fragment-list get-export get-sdk get-snapshot-block get-package-version-asset
	get-configuration get-latest-configuration get-work-unit-results get-raw-message-content
	get-images get-hls-streaming-session-url`)

// awsReadOps are the read-only operations of each AWS service.
var awsReadOps = awsOps(map[string]string{
	"ec2": `describe-instances describe-instance-status describe-instance-types describe-images
		describe-volumes describe-volume-status describe-volumes-modifications describe-snapshots
		describe-security-groups describe-security-group-rules describe-vpcs describe-subnets
		describe-route-tables describe-internet-gateways describe-nat-gateways
		describe-network-interfaces describe-addresses describe-key-pairs describe-regions
		describe-availability-zones describe-tags describe-launch-templates
		describe-launch-template-versions describe-account-attributes describe-vpc-endpoints
		describe-vpc-peering-connections describe-transit-gateways describe-network-acls
		describe-spot-instance-requests describe-reserved-instances describe-placement-groups
		describe-iam-instance-profile-associations describe-instance-attribute get-console-output
		describe-flow-logs describe-prefix-lists describe-managed-prefix-lists describe-dhcp-options
		describe-customer-gateways describe-vpn-connections describe-vpn-gateways
		describe-capacity-reservations describe-hosts describe-fleets describe-egress-only-internet-gateways`,
	"s3api": `head-bucket head-object list-buckets list-objects list-objects-v2 list-object-versions
		list-multipart-uploads get-bucket-location get-bucket-policy get-bucket-policy-status
		get-bucket-acl get-bucket-versioning get-bucket-encryption get-bucket-lifecycle-configuration
		get-bucket-tagging get-bucket-logging get-bucket-replication get-bucket-cors get-bucket-website
		get-bucket-notification-configuration get-public-access-block get-object-acl
		get-object-tagging get-object-attributes get-bucket-ownership-controls
		get-object-lock-configuration get-object-retention get-object-legal-hold`,
	"iam": `get-user list-users get-role list-roles get-policy get-policy-version list-policies
		list-attached-role-policies list-attached-user-policies list-attached-group-policies
		list-role-policies get-role-policy list-user-policies get-user-policy list-groups get-group
		list-groups-for-user list-instance-profiles get-instance-profile list-access-keys
		get-access-key-last-used list-mfa-devices get-account-summary get-account-password-policy
		list-account-aliases list-server-certificates list-open-id-connect-providers
		list-saml-providers simulate-principal-policy get-account-authorization-details
		get-credential-report list-role-tags list-user-tags`,
	"sts":              `get-caller-identity get-access-key-info`,
	"cloudtrail":       `lookup-events describe-trails get-trail-status get-trail list-trails get-event-selectors get-insight-selectors list-tags list-event-data-stores`,
	"cloudwatch":       `describe-alarms describe-alarm-history describe-alarms-for-metric get-metric-statistics get-metric-data list-metrics list-dashboards get-dashboard describe-anomaly-detectors list-tags-for-resource`,
	"logs":             `describe-log-groups describe-log-streams filter-log-events get-log-events describe-metric-filters describe-subscription-filters describe-queries get-query-results describe-destinations describe-export-tasks describe-resource-policies list-tags-log-group list-tags-for-resource get-log-record`,
	"ecs":              `describe-clusters describe-services describe-tasks describe-task-definition describe-container-instances describe-capacity-providers list-clusters list-services list-tasks list-task-definitions list-task-definition-families list-container-instances list-tags-for-resource list-account-settings`,
	"eks":              `describe-cluster list-clusters describe-nodegroup list-nodegroups describe-addon list-addons describe-addon-versions describe-fargate-profile list-fargate-profiles describe-update list-updates list-identity-provider-configs`,
	"rds":              `describe-db-instances describe-db-clusters describe-db-snapshots describe-db-cluster-snapshots describe-events describe-db-parameter-groups describe-db-parameters describe-db-cluster-parameter-groups describe-db-cluster-parameters describe-db-subnet-groups describe-db-engine-versions describe-pending-maintenance-actions describe-db-log-files download-db-log-file-portion describe-orderable-db-instance-options describe-certificates describe-db-proxies describe-event-subscriptions describe-option-groups list-tags-for-resource`,
	"elbv2":            `describe-load-balancers describe-target-groups describe-target-health describe-listeners describe-rules describe-load-balancer-attributes describe-target-group-attributes describe-tags describe-ssl-policies describe-listener-certificates describe-account-limits`,
	"elb":              `describe-load-balancers describe-instance-health describe-load-balancer-attributes describe-tags`,
	"autoscaling":      `describe-auto-scaling-groups describe-auto-scaling-instances describe-scaling-activities describe-launch-configurations describe-policies describe-scheduled-actions describe-lifecycle-hooks describe-tags describe-account-limits describe-warm-pool`,
	"lambda":           `list-functions get-function get-function-configuration get-policy list-aliases get-alias list-versions-by-function list-event-source-mappings get-event-source-mapping get-account-settings list-layers list-tags get-function-concurrency list-function-url-configs`,
	"route53":          `list-hosted-zones list-hosted-zones-by-name get-hosted-zone list-resource-record-sets list-health-checks get-health-check get-health-check-status get-change list-tags-for-resource test-dns-answer`,
	"dynamodb":         `describe-table list-tables describe-continuous-backups describe-time-to-live list-backups describe-backup list-tags-of-resource describe-limits describe-endpoints get-item batch-get-item query scan`,
	"sqs":              `list-queues get-queue-url get-queue-attributes list-queue-tags list-dead-letter-source-queues`,
	"sns":              `list-topics get-topic-attributes list-subscriptions list-subscriptions-by-topic get-subscription-attributes list-tags-for-resource`,
	"cloudformation":   `describe-stacks describe-stack-events describe-stack-resources describe-stack-resource list-stacks list-stack-resources get-template get-template-summary list-exports list-imports describe-change-set list-change-sets describe-stack-drift-detection-status describe-stack-resource-drifts list-stack-sets describe-stack-set`,
	"ssm":              `describe-instance-information get-command-invocation list-commands list-command-invocations describe-parameters get-parameter get-parameters get-parameters-by-path get-parameter-history list-documents describe-document list-associations describe-automation-executions get-inventory list-compliance-items`,
	"secretsmanager":   `describe-secret list-secrets list-secret-version-ids get-resource-policy`,
	"kms":              `describe-key list-keys list-aliases get-key-policy get-key-rotation-status list-grants list-key-policies list-resource-tags`,
	"elasticache":      `describe-cache-clusters describe-replication-groups describe-cache-parameter-groups describe-cache-parameters describe-cache-subnet-groups describe-events describe-snapshots describe-users describe-user-groups describe-serverless-caches list-tags-for-resource describe-reserved-cache-nodes describe-update-actions describe-service-updates describe-engine-default-parameters describe-global-replication-groups`,
	"acm":              `list-certificates describe-certificate get-certificate list-tags-for-certificate get-account-configuration`,
	"ecr":              `describe-repositories describe-images list-images describe-image-scan-findings get-repository-policy get-lifecycle-policy describe-registry get-registry-policy list-tags-for-resource`,
	"organizations":    `describe-organization list-accounts describe-account list-roots list-organizational-units-for-parent list-policies describe-policy list-children list-parents`,
	"health":           `describe-events describe-event-details describe-affected-entities describe-entity-aggregates describe-event-aggregates describe-event-types`,
	"apigateway":       `get-rest-apis get-rest-api get-stages get-stage get-resources get-deployments`,
	"apigatewayv2":     `get-apis get-api get-stages get-routes get-integrations`,
	"cloudfront":       `list-distributions get-distribution get-distribution-config list-invalidations get-invalidation`,
	"efs":              `describe-file-systems describe-mount-targets describe-access-points describe-lifecycle-configuration describe-backup-policy describe-file-system-policy`,
	"kinesis":          `describe-stream describe-stream-summary list-streams list-shards`,
	"elasticbeanstalk": `describe-environments describe-applications describe-events describe-environment-health`,
	"emr":              `describe-cluster list-clusters list-steps list-instances describe-step`,
	"opensearch":       `describe-domain describe-domains list-domain-names`,
	"es":               `describe-elasticsearch-domain describe-elasticsearch-domains list-domain-names`,
	"redshift":         `describe-clusters describe-cluster-snapshots describe-events describe-cluster-parameters`,
	"cognito-idp":      `describe-user-pool list-user-pools list-user-pool-clients`,
	"service-quotas":   `list-service-quotas get-service-quota list-services`,
	"configservice":    `describe-config-rules describe-compliance-by-config-rule get-compliance-details-by-config-rule describe-configuration-recorders describe-configuration-recorder-status list-discovered-resources get-resource-config-history`,
	"guardduty":        `list-detectors get-detector list-findings get-findings`,
	"events":           `list-rules describe-rule list-targets-by-rule list-event-buses describe-event-bus`,
	"stepfunctions":    `list-state-machines describe-state-machine list-executions describe-execution get-execution-history`,
	"backup":           `list-backup-plans list-backup-jobs list-backup-vaults describe-backup-job`,
	"athena":           `list-work-groups get-query-execution get-query-results list-query-executions`,
	"glue":             `get-databases get-tables get-table get-jobs get-job get-job-runs get-crawlers get-crawler`,
})

func awsOps(m map[string]string) map[string]map[string]bool {
	out := make(map[string]map[string]bool, len(m))
	for service, ops := range m {
		out[service] = wordSet(ops)
	}
	return out
}

// cloudVerdict is how a gcloud or az command path is judged.
type cloudVerdict uint8

const (
	cloudUnknown cloudVerdict = iota
	cloudRead                 // an API read
	cloudLocal                // reads the CLI's local configuration
)

// cloudPaths expands "group sub: verb verb" lines into command paths.
func cloudPaths(v cloudVerdict, spec string) map[string]cloudVerdict {
	out := map[string]cloudVerdict{}
	for _, line := range strings.Split(spec, ";") {
		group, verbs, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		group = strings.Join(strings.Fields(group), " ")
		for _, verb := range strings.Fields(verbs) {
			p := verb
			if group != "" {
				p = group + " " + verb
			}
			out[p] = v
		}
	}
	return out
}

func mergePaths(ms ...map[string]cloudVerdict) map[string]cloudVerdict {
	out := map[string]cloudVerdict{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// gcloudReads are gcloud's read-only command paths (groups and verb).
var gcloudReads = mergePaths(cloudPaths(cloudRead, `
	compute instances: list describe get-serial-port-output get-iam-policy;
	compute disks: list describe; compute images: list describe; compute snapshots: list describe;
	compute networks: list describe; compute networks subnets: list describe;
	compute firewall-rules: list describe; compute routes: list describe;
	compute routers: list describe get-status; compute addresses: list describe;
	compute forwarding-rules: list describe; compute backend-services: list describe get-health;
	compute instance-groups: list describe; compute instance-groups managed: list describe list-instances;
	compute instance-templates: list describe; compute machine-types: list describe;
	compute regions: list describe; compute zones: list describe; compute operations: list describe;
	compute target-pools: list describe get-health; compute health-checks: list describe;
	compute ssl-certificates: list describe; compute url-maps: list describe;
	compute project-info: describe;
	container clusters: list describe; container node-pools: list describe;
	container operations: list describe; container: get-server-config;
	projects: list describe get-iam-policy;
	iam service-accounts: list describe get-iam-policy; iam service-accounts keys: list;
	iam roles: list describe;
	sql instances: list describe; sql databases: list describe; sql users: list;
	sql backups: list describe; sql operations: list describe;
	storage buckets: list describe; storage objects: list describe; storage: ls;
	run services: list describe; run revisions: list describe; run jobs: list describe;
	run jobs executions: list describe;
	functions: list describe; functions logs: read;
	dns managed-zones: list describe; dns record-sets: list describe;
	logging logs: list; logging: read; logging sinks: list describe; logging metrics: list describe;
	pubsub topics: list describe; pubsub subscriptions: list describe;
	secrets: list describe; secrets versions: list describe;
	kms keyrings: list describe; kms keys: list describe;
	artifacts repositories: list describe; artifacts docker images: list;
	builds: list describe; builds triggers: list describe;
	app services: list describe; app versions: list describe;
	redis instances: list describe; spanner instances: list describe;
	monitoring dashboards: list describe;
	organizations: list describe; resource-manager folders: list describe;
	billing accounts: list describe; services: list`),
	cloudPaths(cloudLocal, `config: list get-value; config configurations: list describe;
	auth: list; : version info`))

// azReads are az's read-only command paths (groups and verb).
var azReads = mergePaths(cloudPaths(cloudRead, `
	vm: list show get-instance-view list-ip-addresses list-sizes list-skus list-usage;
	vm image: list; vm extension: list show;
	vmss: list show get-instance-view list-instances;
	network vnet: list show; network vnet subnet: list show; network nsg: list show;
	network nsg rule: list show; network nic: list show; network public-ip: list show;
	network lb: list show; network application-gateway: list show;
	network dns zone: list show; network dns record-set: list; network private-dns zone: list show;
	group: list show exists; resource: list show;
	aks: list show get-versions; aks nodepool: list show;
	acr: list show; acr repository: list show-tags;
	keyvault: list show; keyvault secret: list; keyvault key: list; keyvault certificate: list;
	webapp: list show; functionapp: list show; appservice plan: list show;
	sql server: list show; sql db: list show; cosmosdb: list show;
	monitor metrics: list; monitor activity-log: list; monitor diagnostic-settings: list;
	monitor log-analytics workspace: list show;
	role assignment: list; role definition: list;
	ad sp: list show; ad app: list show;
	disk: list show; snapshot: list show; image: list show; redis: list show;
	postgres flexible-server: list show; mysql flexible-server: list show;
	eventhubs namespace: list show; servicebus namespace: list show;
	storage account: list show; tag: list; lock: list; deployment group: list show;
	provider: list show; feature: list; policy assignment: list; account: list-locations`),
	cloudPaths(cloudLocal, `account: show list; : version`))

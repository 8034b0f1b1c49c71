package checkout

import (
	"slices"
	"strings"
)

// Role is what a member of a store may do there (DESIGN.md section 9). The
// roles and their actions are one table, roleActions: the service checks
// every call a member makes against it (internal/service, authorize), and
// the dashboard's pages hide what it refuses.
type Role string

// The roles, from the most to the least allowed.
const (
	// RoleAdministrator may do everything: members and store settings
	// included.
	RoleAdministrator Role = "administrator"
	// RoleDeveloper works with API keys, webhooks, events, request logs,
	// sessions and payments; no refunds, disputes, members or settings.
	RoleDeveloper Role = "developer"
	// RoleSupport works with sessions, payments, refunds and disputes; no
	// API keys, webhooks, events or request logs.
	RoleSupport Role = "support"
	// RoleViewer reads, and changes nothing; never a key's hint, a
	// webhook's signing secret or a request log's bodies.
	RoleViewer Role = "viewer"
)

// Roles lists the roles, from the most to the least allowed.
var Roles = []Role{RoleAdministrator, RoleDeveloper, RoleSupport, RoleViewer}

// Action is something a member may be allowed to do in a store.
type Action string

// The actions.
const (
	// ActionViewPayments: the store's home, its sessions and payments, with
	// their refunds and disputes.
	ActionViewPayments Action = "payments.read"
	// ActionRefund: refund a payment, cancel a refund, simulate a crypto
	// refund's payout in test mode.
	ActionRefund Action = "refunds.write"
	// ActionAnswerDispute: send a dispute's evidence.
	ActionAnswerDispute Action = "disputes.write"
	// ActionViewKeys: the list of API keys, without their hints.
	ActionViewKeys Action = "keys.read"
	// ActionSeeKeyHints: an API key's hint (the last four characters of
	// its secret).
	ActionSeeKeyHints Action = "keys.hints"
	// ActionManageKeys: create and revoke API keys.
	ActionManageKeys Action = "keys.write"
	// ActionViewWebhooks: webhook endpoints, their health and deliveries,
	// without their signing secrets.
	ActionViewWebhooks Action = "webhooks.read"
	// ActionSeeWebhookSecrets: a webhook endpoint's signing secret.
	ActionSeeWebhookSecrets Action = "webhooks.secrets"
	// ActionManageWebhooks: add, edit, disable, enable, test and delete
	// endpoints, roll their secrets, resend and retry deliveries.
	ActionManageWebhooks Action = "webhooks.write"
	// ActionViewEvents: the store's events.
	ActionViewEvents Action = "events.read"
	// ActionViewLogs: the request logs, without their bodies.
	ActionViewLogs Action = "logs.read"
	// ActionSeeLogBodies: a request log's request and response bodies.
	ActionSeeLogBodies Action = "logs.bodies"
	// ActionViewSettings: the store's settings and crypto keys.
	ActionViewSettings Action = "settings.read"
	// ActionManageSettings: change the store's settings and crypto keys.
	ActionManageSettings Action = "settings.write"
	// ActionManageAcquirer: set up and remove the store's account at a card
	// acquirer (its secret keys, entered once, never shown again) and see
	// its secrets' hints.
	ActionManageAcquirer Action = "acquirer.write"
	// ActionViewMembers: the store's members and pending invitations.
	ActionViewMembers Action = "members.read"
	// ActionManageMembers: invite, change a role, remove a member.
	ActionManageMembers Action = "members.write"
	// ActionViewAudit: the store's audit trail (the Security page).
	ActionViewAudit Action = "audit.read"
)

// roleActions is the one table of which role may do which action.
var roleActions = map[Role][]Action{
	RoleAdministrator: {
		ActionViewPayments, ActionRefund, ActionAnswerDispute,
		ActionViewKeys, ActionSeeKeyHints, ActionManageKeys,
		ActionViewWebhooks, ActionSeeWebhookSecrets, ActionManageWebhooks,
		ActionViewEvents, ActionViewLogs, ActionSeeLogBodies,
		ActionViewSettings, ActionManageSettings, ActionManageAcquirer, ActionViewMembers, ActionManageMembers, ActionViewAudit,
	},
	RoleDeveloper: {
		ActionViewPayments,
		ActionViewKeys, ActionSeeKeyHints, ActionManageKeys,
		ActionViewWebhooks, ActionSeeWebhookSecrets, ActionManageWebhooks,
		ActionViewEvents, ActionViewLogs, ActionSeeLogBodies,
		ActionViewSettings, ActionViewMembers,
	},
	RoleSupport: {
		ActionViewPayments, ActionRefund, ActionAnswerDispute,
		ActionViewSettings, ActionViewMembers,
	},
	RoleViewer: {
		ActionViewPayments, ActionViewKeys, ActionViewWebhooks, ActionViewEvents, ActionViewLogs,
		ActionViewSettings, ActionViewMembers,
	},
}

// actionNames name the actions in a refusal's message.
var actionNames = map[Action]string{
	ActionViewPayments:      "see payments",
	ActionRefund:            "refund payments",
	ActionAnswerDispute:     "answer disputes",
	ActionViewKeys:          "see API keys",
	ActionSeeKeyHints:       "see API keys' hints",
	ActionManageKeys:        "create or revoke API keys",
	ActionViewWebhooks:      "see webhooks",
	ActionSeeWebhookSecrets: "see webhook signing secrets",
	ActionManageWebhooks:    "change webhooks",
	ActionViewEvents:        "see events",
	ActionViewLogs:          "see request logs",
	ActionSeeLogBodies:      "see request logs' bodies",
	ActionViewSettings:      "see the store's settings",
	ActionManageSettings:    "change the store's settings",
	ActionManageAcquirer:    "set up the store's card acquirer",
	ActionViewMembers:       "see the team",
	ActionManageMembers:     "manage the team",
	ActionViewAudit:         "see the audit trail",
}

// May reports whether the role may do the action. An unknown role may do
// nothing.
func (r Role) May(a Action) bool { return slices.Contains(roleActions[r], a) }

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// Title is the role's name as pages show it: "Administrator".
func (r Role) Title() string {
	if r == "" {
		return ""
	}
	return strings.ToUpper(string(r[:1])) + string(r[1:])
}

// ParseRole reads a role's name, in any case; an unknown one is
// validation_failed on param.
func ParseRole(s, param string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if !r.Valid() {
		names := make([]string, len(Roles))
		for i, r := range Roles {
			names[i] = string(r)
		}
		msg := "role must be one of " + strings.Join(names, ", ")
		return "", &Error{Code: EValidationFailed, Param: param, Message: msg + ".",
			Details: []Violation{{Code: "invalid_role", Param: param, Message: msg}}}
	}
	return r, nil
}

// Forbidden is the refusal of an action to a member whose role does not
// allow it: permission_denied, naming the role and the action.
func Forbidden(r Role, a Action) *Error {
	what := actionNames[a]
	if what == "" {
		what = string(a)
	}
	return Errorf(EPermissionDenied, "Your role in this store (%s) does not allow you to %s.", r.Title(), what)
}

-- Members' roles (DESIGN.md section 9, checkout/role.go): administrator,
-- developer, support or viewer. Every member made before roles existed could
-- do everything, so each becomes an administrator.
ALTER TABLE memberships ADD COLUMN role TEXT NOT NULL DEFAULT 'administrator'
	CHECK (role IN ('administrator', 'developer', 'support', 'viewer'));

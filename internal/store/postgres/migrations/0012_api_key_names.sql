-- A key's name, given when it is made, says what it is for ("web shop",
-- "refund script"). Keys made before names existed have none ('').
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';

"""The database: schema, migrations, writing and reading results."""

CREATE TABLE "anomaly_explanations" (
	"dimension" text NOT NULL,
	"group_value" text NOT NULL,
	"currency" text NOT NULL,
	"day" date NOT NULL,
	"inputs" text NOT NULL,
	"explanation" jsonb NOT NULL,
	"computed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "anomaly_explanations_pk" PRIMARY KEY("dimension","group_value","currency","day")
);
